#!/bin/bash
# Seven-fold cross-validated held-out evaluation of two scorer recipes
# (docs/retrieval.md, step 10): "ctrl" (the shipped recipe) and "emb" (the
# same with the word-vector features of issue10-step10-embeddings.patch).
# Run from the root of a checkout with that patch applied and
# retriever/vocab/data/embed.bin.gz generated (see the patch's gen
# command); needs PostgreSQL with pgvector (make test installs it) and
# python3. About 35 minutes of training on 2 cores, 5 of evaluation.
#
#   bash docs/experiments/issue10-step10-cv.sh /tmp/cv
#
# ATRIUM_EXP_NOEMB=1 (patch) leaves the vectors out, so the three new
# feature slots are 0: that is the ctrl recipe. ATRIUM_EXP_WEIGHTS=FILE
# (patch) scores with FILE instead of the embedded weights.
set -euo pipefail
out=${1:?usage: $0 OUTDIR}
bench=$(cd ../shared/bench && pwd)
mkdir -p "$out"
go build -o "$out/atrium" ./cmd/atrium

# Held-out folds and strict-pairs binaries (also used by step 11).
bash docs/experiments/cv-prep.sh "$out"

# Training: both recipes per fold, two at a time.
T="--bench $bench/spider --extra-questions $bench/spider-syn/train_spider.json --hold-out-every 7"
for k in 0 1 2 3 4 5 6; do
  ATRIUM_EXP_NOEMB=1 "$out/atrium" train-atr $T --hold-out-shift $k --out "$out/ctrl_$k.json" &
  "$out/atrium" train-atr $T --hold-out-shift $k --out "$out/emb_$k.json" &
  wait
done

# Evaluation: each fold's scorers on its held-out databases, abstention off,
# at their own operating point (with per-question files) and at fixed
# relative cuts.
for k in 0 1 2 3 4 5 6; do
  for m in ctrl emb; do
    envs=""; [ $m = ctrl ] && envs="ATRIUM_EXP_NOEMB=1"
    for pt in own 0.5 0.75 1.0 1.125 1.25 1.5; do
      wf="$out/${m}_$k.json"
      if [ $pt != own ]; then
        wf="$out/${m}_${k}_$pt.json"
        python3 -c "import json; m=json.load(open('$out/${m}_$k.json')); m['relative_cut']=$pt; json.dump(m,open('$wf','w'))"
      fi
      for s in sp syn; do
        pq=""; [ $pt = own ] && pq="--per-question $out/pq_${m}_${k}_$s.jsonl"
        r=$(env $envs ATRIUM_EXP_WEIGHTS="$wf" "$out/strict-$k" eval --bench "$out/ho_${s}_$k" --abstain-floor=-inf --abstain-coverage=0 $pq 2>&1 | grep '^atr+exp' | awk '{print $2,$3,$4,$5,$6}')
        n=$(python3 -c "import json; print(len(json.load(open('$out/ho_${s}_$k/dev.json'))))")
        echo "$k $m $pt $s $n $r"
      done
    done
  done
done > "$out/results.txt"

# Pooled figures (question-weighted over the folds) and a paired bootstrap
# over databases of emb − ctrl at the own operating points.
python3 - "$out" <<'PY'
import collections, json, random, sys
out = sys.argv[1]
rows = collections.defaultdict(lambda: [0.0] * 6)
for l in open(f'{out}/results.txt'):
    p = l.split()
    if len(p) < 10:
        continue
    n = int(p[4]); P, R, CR, F1, T = map(float, p[5:10])
    r = rows[(p[1], p[2], p[3])]
    for i, v in enumerate((n, n * P, n * R, n * CR, n * F1, n * T)):
        r[i] += v
for key in sorted(rows):
    n, P, R, CR, F1, T = rows[key]
    print('%-5s %-5s %-4s n=%5d  P %.3f R %.3f CR %.3f F1 %.3f tables %.2f' % (key + (n, P / n, R / n, CR / n, F1 / n, T / n)))
def load(p):
    res = {}
    for l in open(p):
        r = json.loads(l)
        chosen = {c['table'] for c in r['candidates'] if c.get('chosen')}
        gold = set(r['gold']); tp = len(chosen & gold)
        P = tp / len(chosen) if chosen else 0; R = tp / len(gold)
        res[(r['db'], r['index'])] = (2 * P * R / (P + R) if P + R else 0, 1.0 if gold <= chosen else 0.0)
    return res
for s in ('sp', 'syn'):
    per = collections.defaultdict(lambda: [0.0, 0.0, 0])
    for k in range(7):
        a = load(f'{out}/pq_emb_{k}_{s}.jsonl'); b = load(f'{out}/pq_ctrl_{k}_{s}.jsonl')
        for key in a:
            d = per[key[0]]; d[0] += a[key][0] - b[key][0]; d[1] += a[key][1] - b[key][1]; d[2] += 1
    dbs = list(per)
    def stat(sample):
        n = sum(per[d][2] for d in sample)
        return sum(per[d][0] for d in sample) / n, sum(per[d][1] for d in sample) / n
    est = stat(dbs); random.seed(1)
    bs = [stat([random.choice(dbs) for _ in dbs]) for _ in range(2000)]
    f = sorted(x[0] for x in bs); c = sorted(x[1] for x in bs)
    print('%s emb-ctrl over %d databases: dF1 %+.3f [%+.3f, %+.3f]  dCR %+.3f [%+.3f, %+.3f]' % (s, len(dbs), est[0], f[50], f[1949], est[1], c[50], c[1949]))
PY
