#!/bin/bash
# Step 73: the folds' held-out questions with their unanswerable sets
# (go run ./docs/experiments/issue10-step23/foldun OUTDIR) at the shipped
# floors; pooled abstention, false abstention and P R CR F1 tables per
# wording.
#
#   bash docs/experiments/issue10-step73/abstain.sh OUTDIR 'OUTDIR/NAME/strict-%k' [LABEL]
set -eu
out=$1 B=$2
for s in sp syn; do
  for k in 0 1 2 3 4 5 6; do
    "${B//%k/$k}" eval --bench "$out/ho_${s}_$k" --unanswerable "$out/un_${s}_$k.json" --atr-weights "$out/z_$k.json" 2>&1 |
      grep -E '^benchmark|^atr\+expansion +[0-9]' | tr '\n' ' '
    echo
  done | python3 -c "
import re, sys
na = nu = 0; ab = fa = 0.0; P = [0.0] * 5
for l in sys.stdin:
    m = re.search(r'(\d+) questions, (\d+) unanswerable', l); q, u = int(m.group(1)), int(m.group(2)); a = q - u
    v = l.split('atr+expansion')[-1].split()
    na += a; nu += u; ab += u * float(v[7]); fa += a * float(v[8]); P = [p + a * float(x) for p, x in zip(P, v[:5])]
print('%-10s %-4s answerable %d unanswerable %d  abstain %.4f false %.4f  ' % ('${3:-x}', '$s', na, nu, ab / nu, fa / na) + ' '.join('%.3f' % (p / na) for p in P))
"
done
