#!/bin/bash
# Step 21 of docs/retrieval.md: per fold K, four networks trained with each
# training question prepared under cross-fitted, strict learned pairs
# (`--learned-pairs-folds 5 --learned-pairs-strict`), the operating point
# held within BAND tables per validation question of the fold's step-11
# ensemble (FOLDDIR/z_K.json), into OUTDIR/xs_K.json. About 8 minutes per
# fold on 2 cores. Run from the root of a checkout with PostgreSQL and
# pgvector, after `bash docs/experiments/issue10-step16/strict.sh FOLDDIR
# base`; then score it as step 19's sets:
#
#   bash docs/experiments/issue10-step21/xfolds.sh FOLDDIR OUTDIR [BAND]
#   bash docs/experiments/issue10-step19/rows.sh FOLDDIR OUTDIR xs MAINBIN
set -eu
fx=${1:?usage: $0 FOLDDIR OUTDIR [BAND]} out=${2:?usage: $0 FOLDDIR OUTDIR [BAND]} band=${3:-0.05}
mkdir -p "$out"
[ -x "$out/atrium" ] || go build -o "$out/atrium" ./cmd/atrium
train=(--bench ../shared/bench/spider --extra-questions ../shared/bench/spider-syn/train_spider.json --hold-out-every 7)
for k in 0 1 2 3 4 5 6; do
  [ -s "$out/xs_$k.json" ] ||
    "$out/atrium" train-atr "${train[@]}" --hold-out-shift "$k" --members 4 \
      --learned-pairs-folds 5 --learned-pairs-strict --tables-like "$fx/z_$k.json" --tables-band "$band" \
      --verbose --out "$out/xs_$k.json" >"$out/xlog_$k.txt" 2>&1
done
