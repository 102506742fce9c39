#!/bin/bash
# Step 45 of docs/retrieval.md: per fold K given, the fold's shipped
# ensemble (FOLDDIR/z_K.json), its networks unchanged, with only the
# operating point chosen again on the held-out training questions
# (grouped split), held within 0.05 tables per question of z_K's own:
# OUTDIR/rz_K.json (steps 37, 40 and 44's command on the shipped networks).
#
#   bash docs/experiments/issue10-step45/recal.sh FOLDDIR OUTDIR BINARY K...
set -eu
fx=$1 out=$2 bin=$3
shift 3
mkdir -p "$out"
train=(--bench ../shared/bench/spider --extra-questions ../shared/bench/spider-syn/train_spider.json --hold-out-every 7 --embedder builtin --valid-by-sql)
for k in "$@"; do
  [ -s "$out/rz_$k.json" ] ||
    "$bin" train-atr "${train[@]}" --hold-out-shift "$k" --verbose \
      --recalibrate "$fx/z_$k.json" --tables-like "$fx/z_$k.json" --tables-band 0.05 \
      --out "$out/rz_$k.json" >"$out/log_$k.txt" 2>&1
  echo "recalibrated fold $k $(date -u +%H:%M)"
done
