#!/bin/bash
# Step 63 of docs/retrieval.md, rule R1: false abstention at the shipped
# floors on the folds' held-out databases (ho) and their renamed copies
# (ren: fold_rename OUTDIR ren -), each fold scored by its shipped ensemble
# OUTDIR/z_K.json, pooled over the seven folds. One binary per call, so a
# control and a candidate are two calls (step 59's falseabs.txt is the same
# measurement). BINARY may hold %k for each fold's own binary (strict.sh's
# DIR/strict-%k, step 67); PREFIXES picks the sets (default "ho ren").
#
#   bash docs/experiments/issue10-step63/falseabs.sh OUTDIR BINARY LABEL
set -eu
fx=$1 bin=$2 label=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for pre in ${PREFIXES:-ho ren}; do
  for s in sp syn; do
    for k in 0 1 2 3 4 5 6; do
      "${bin//%k/$k}" eval --bench "$fx/${pre}_${s}_$k" --atr-weights "$fx/z_$k.json" --json "$tmp/${pre}_${s}_$k.json" >/dev/null 2>&1
    done
    python3 - "$tmp" "$pre" "$s" "$label" <<'PY'
import json, sys
tmp, pre, s, label = sys.argv[1:5]
n, fa, acc = 0, 0.0, [0.0] * 4
for k in range(7):
    r = json.load(open(f'{tmp}/{pre}_{s}_{k}.json'))
    m = r['methods'][r['default']]
    q = r['questions'] - r['unanswerable']
    n += q
    fa += q * m['false_abstain']
    acc = [a + q * m[f] for a, f in zip(acc, ('precision', 'recall', 'complete_recall', 'f1'))]
print('%-4s %-4s %-3s n=%d  false_abstain %.4f  ' % (label, pre, s, n, fa / n) + ' '.join('%.3f' % (a / n) for a in acc))
PY
  done
done
