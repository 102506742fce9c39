#!/bin/bash
# Step 37 of docs/retrieval.md: per fold K given, step 36's networks
# (issue10-step36/tw_K.json, not retrained) with only the operating point
# chosen again on the held-out training questions of step 36's split, held
# within 0.05 tables per question of the fold's shipped ensemble
# (FOLDDIR/z_K.json, foldlib.sh's fold_setup): OUTDIR/rw_K.json.
#
#   bash docs/experiments/issue10-step37/recal.sh FOLDDIR OUTDIR BINARY K...
set -eu
fx=$1 out=$2 bin=$3
shift 3
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
train=(--bench ../shared/bench/spider --extra-questions ../shared/bench/spider-syn/train_spider.json --hold-out-every 7 --embedder words --valid-by-sql)
for k in "$@"; do
  [ -s "$out/rw_$k.json" ] ||
    "$bin" train-atr "${train[@]}" --hold-out-shift "$k" --members 4 --verbose \
      --recalibrate "$here/../issue10-step36/tw_$k.json" --tables-like "$fx/z_$k.json" --tables-band 0.05 \
      --out "$out/rw_$k.json" >"$out/log_$k.txt" 2>&1
  echo "recalibrated fold $k $(date -u +%H:%M)"
done
