#!/bin/bash
# Step 67 of docs/retrieval.md: false abstention at the shipped floors on
# the folds' held-out databases (ho), each fold scored by its strict binary
# DIR/strict-K (issue10-step16/strict.sh) and its ensemble OUTDIR/z_K.json,
# pooled over the seven folds.
#
#   bash docs/experiments/issue10-step67/strict-falseabs.sh OUTDIR DIR LABEL
set -eu
fx=$1 dir=$2 label=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for s in sp syn; do
  for k in 0 1 2 3 4 5 6; do
    "$dir/strict-$k" eval --bench "$fx/ho_${s}_$k" --atr-weights "$fx/z_$k.json" --json "$tmp/ho_${s}_$k.json" >/dev/null 2>&1
  done
  python3 - "$tmp" "$s" "$label" <<'PY'
import json, sys
tmp, s, label = sys.argv[1:4]
n, fa, acc = 0, 0.0, [0.0] * 4
for k in range(7):
    r = json.load(open(f'{tmp}/ho_{s}_{k}.json'))
    m = r['methods'][r['default']]
    q = r['questions'] - r['unanswerable']
    n += q
    fa += q * m['false_abstain']
    acc = [a + q * m[f] for a, f in zip(acc, ('precision', 'recall', 'complete_recall', 'f1'))]
print('%-6s ho %-3s n=%d  false_abstain %.4f  ' % (label, s, n, fa / n) + ' '.join('%.3f' % (a / n) for a in acc))
PY
done
