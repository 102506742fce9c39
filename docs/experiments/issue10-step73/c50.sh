#!/bin/bash
# Step 73: pooled C = 50 complete recall (hybrid@50) and P R CR F1 tables
# per wording on the seven folds, abstention off, each fold scored by the
# binary BINPATTERN (%k: the fold) and its ensemble z_k. Build the strict
# binaries with issue10-step16/strict.sh OUTDIR NAME (or, for a changed
# tree, `go build` with each fold's OUTDIR/NAME/gK/learned.tsv in place).
#
#   [PRE=ren] bash docs/experiments/issue10-step73/c50.sh OUTDIR 'OUTDIR/NAME/strict-%k' [LABEL]
set -eu
out=$1 B=$2 pre=${PRE:-ho}
for s in sp syn; do
  for k in 0 1 2 3 4 5 6; do
    "${B//%k/$k}" eval --bench "$out/${pre}_${s}_$k" --atr-weights "$out/z_$k.json" --abstain-floor=-inf --abstain-coverage=0 2>&1 |
      grep -E '^benchmark|^hybrid@50|^atr\+expansion' | tr '\n' ' '
    echo
  done | python3 -c "
import re, sys
n, acc, c = 0, [0.0] * 5, 0.0
for l in sys.stdin:
    q = int(re.search(r'(\d+) questions', l).group(1)); n += q
    v = l.split('atr+expansion')[-1].split()[:5]; acc = [a + q * float(x) for a, x in zip(acc, v)]
    c += q * float(l.split('hybrid@50')[1].split()[2])
print('%-10s %-4s %-3s n=%d C50 %.3f  ' % ('${3:-x}', '$pre', '$s', n, c / n) + ' '.join('%.3f' % (a / n) for a in acc))
"
done
