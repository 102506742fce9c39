#!/bin/bash
# Step 20 of docs/retrieval.md: per fold, step 19's eight-member ensemble
# (the fold's step-11 four, FOLDDIR/z_K.json, and four networks trained at
# this commit, OUTDIR/ens4_K.json, trained here when missing) with its
# operating point chosen no looser than the step-11 ensemble's own
# (`train-atr --recalibrate A,B --tables-like A`), into OUTDIR/m8c_K.json.
# About 7 minutes per fold for the training and 3 for the recalibration on
# 2 cores. Run from the root of a checkout with PostgreSQL and pgvector,
# after
#
#   bash docs/experiments/issue10-step16/strict.sh FOLDDIR base
#   bash docs/experiments/issue10-step20/run.sh FOLDDIR OUTDIR
#
# then score the set as step 19's: rows.sh FOLDDIR OUTDIR m8c MAINBIN.
set -eu
fx=${1:?usage: $0 FOLDDIR OUTDIR} out=${2:?usage: $0 FOLDDIR OUTDIR}
mkdir -p "$out"
[ -x "$out/atrium" ] || go build -o "$out/atrium" ./cmd/atrium
train=(--bench ../shared/bench/spider --extra-questions ../shared/bench/spider-syn/train_spider.json --hold-out-every 7)
for k in 0 1 2 3 4 5 6; do
  [ -s "$out/ens4_$k.json" ] ||
    "$out/atrium" train-atr "${train[@]}" --hold-out-shift "$k" --members 4 --verbose --out "$out/ens4_$k.json" >"$out/log_$k.txt" 2>&1
  "$out/atrium" train-atr "${train[@]}" --hold-out-shift "$k" --recalibrate "$fx/z_$k.json,$out/ens4_$k.json" \
    --tables-like "$fx/z_$k.json" --verbose --out "$out/m8c_$k.json" >"$out/clog_$k.txt" 2>&1
done
