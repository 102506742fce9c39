#!/bin/bash
# Step 14 of docs/retrieval.md: the seven cross-validation folds' held-out
# databases with every identifier's words run together, as PostgreSQL keeps
# an unquoted camelCase identifier (customerName → customername;
# retriever/evaluate/renamed -rename-words 0 -concat 1), the word-by-word
# renamed copy of step 12 (some identifiers run together), and the original
# schemas, each scored by its fold's step-11 ensemble (slot 9 zeroed, as the
# shipped file has it), abstention off, pooled over the folds. Run from the
# root of a checkout with PostgreSQL and pgvector (make test installs them).
#
#   bash docs/experiments/issue10-step14/folded.sh OUTDIR [BINARY...]
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

# fold: every identifier run together; ren: renamed word by word; pl: the
# original schemas (no dumps, like the others).
for k in 0 1 2 3 4 5 6; do
  for s in sp syn; do
    go run ./retriever/evaluate/renamed -bench "$out/ho_${s}_$k" -out "$out/fold_${s}_$k" -plain "$out/pl_${s}_$k" -rename-words 0 -concat 1 2>/dev/null
    go run ./retriever/evaluate/renamed -bench "$out/ho_${s}_$k" -out "$out/ren_${s}_$k" 2>/dev/null
  done
done

for b in "${bins[@]}"; do
  for pre in pl fold ren; do
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
