#!/bin/bash
# Step 15 of docs/retrieval.md: the seven cross-validation folds' held-out
# databases with every identifier word that abbrev.tsv abbreviates replaced
# by an abbreviation it lists (retriever/evaluate/renamed -rename-words 1
# -abbreviations-only -concat 0), and the original schemas, each scored by
# its fold's step-11 ensemble (slot 9 zeroed, as the shipped file has it),
# abstention off, pooled over the folds. Binaries built with abbrev.tsv
# emptied (its '#' lines kept) measure how much of the list a guesser
# recovers. Run from the root of a checkout with PostgreSQL and pgvector
# (make test installs them) whose abbrev.tsv is the shipped one.
#
#   bash docs/experiments/issue10-step15/abbrev.sh OUTDIR [BINARY...]
#
# Each BINARY (default bin/atrium) prints one row per benchmark and wording:
# P R CR F1 tables.
set -eu
out=${1:?usage: $0 OUTDIR [BINARY...]}
shift
bins=("$@")
[ ${#bins[@]} -eq 0 ] && bins=(bin/atrium)
here=$(cd "$(dirname "$0")" && pwd)
bench=$(cd ../shared/bench && pwd)
mkdir -p "$out"

python3 "$here/../folds.py" "$out" "$bench"
python3 - "$out" "$here/../issue10-step11" <<'PY'
import json, sys
out, ens = sys.argv[1:3]
for k in range(7):
    m = json.load(open(f'{ens}/ens4_{k}.json'))
    for mem in m['members']:
        for row in mem['w1']:
            row[9] = 0.0
    json.dump(m, open(f'{out}/z_{k}.json', 'w'))
PY

for k in 0 1 2 3 4 5 6; do
  for s in sp syn; do
    go run ./retriever/evaluate/renamed -bench "$out/ho_${s}_$k" -out "$out/abbr_${s}_$k" -plain "$out/pl_${s}_$k" \
      -rename-words 1 -abbreviations-only -concat 0 2>/dev/null
  done
done

for b in "${bins[@]}"; do
  for pre in pl abbr; do
    for s in sp syn; do
      for k in 0 1 2 3 4 5 6; do
        "$b" eval --bench "$out/${pre}_${s}_$k" --atr-weights "$out/z_$k.json" --abstain-floor=-inf --abstain-coverage=0 2>&1 |
          grep -E '^benchmark|^atr\+expansion' | tr '\n' ' '
        echo
      done | python3 -c "
import re, sys
n, acc = 0, [0.0] * 5
for l in sys.stdin:
    q = int(re.search(r'(\d+) questions', l).group(1))
    v = l.split('atr+expansion')[-1].split()[:5]
    n += q
    acc = [a + q * float(x) for a, x in zip(acc, v)]
print('%-12s %-4s %-3s n=%d  ' % ('$(basename "$b")', '$pre', '$s', n) + ' '.join('%.3f' % (a / n) for a in acc))
"
    done
  done
done
