#!/bin/bash
# Step 20 of docs/retrieval.md, second rule: run.sh's eight-member
# ensembles (OUTDIR/ens4_K.json must exist) recalibrated to choose within
# BAND tables per question of the fold's step-11 ensemble, above or below
# (`--tables-like A --tables-band BAND`), into OUTDIR/m8b_K.json. About a
# minute per fold on 2 cores.
#
#   bash docs/experiments/issue10-step20/band.sh FOLDDIR OUTDIR BAND
set -eu
fx=${1:?usage: $0 FOLDDIR OUTDIR BAND} out=${2:?} band=${3:?}
go build -o "$out/atrium-band" ./cmd/atrium
train=(--bench ../shared/bench/spider --extra-questions ../shared/bench/spider-syn/train_spider.json --hold-out-every 7)
for k in 0 1 2 3 4 5 6; do
  "$out/atrium-band" train-atr "${train[@]}" --hold-out-shift "$k" --recalibrate "$fx/z_$k.json,$out/ens4_$k.json" \
    --tables-like "$fx/z_$k.json" --tables-band "$band" --verbose --out "$out/m8b_$k.json" >"$out/blog_$k.txt" 2>&1
done
