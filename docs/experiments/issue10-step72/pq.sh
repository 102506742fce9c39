#!/bin/bash
# Step 72: per-question files, abstention off, for the folds' held-out
# sets with their unanswerable sets (ho, un: issue10-step23/foldun) and
# their renamed copies (ren: fold_rename OUTDIR ren -), each fold scored
# by its strict binary (issue10-step16/strict.sh OUTDIR base) and its
# ensemble z_k. Then replay.py picks the operating point.
#
#   bash docs/experiments/issue10-step72/pq.sh OUTDIR
set -eu
fx=$1
d=$fx/s72
mkdir -p "$d"
for k in 0 1 2 3 4 5 6; do
  for s in sp syn; do
    [ -s "$d/ho_${s}_$k.jsonl" ] ||
      "$fx/base/strict-$k" eval --bench "$fx/ho_${s}_$k" --unanswerable "$fx/un_${s}_$k.json" \
        --atr-weights "$fx/z_$k.json" --abstain-floor=-inf --abstain-coverage=0 \
        --per-question "$d/ho_${s}_$k.jsonl" >/dev/null 2>&1
    [ -s "$d/ren_${s}_$k.jsonl" ] ||
      "$fx/base/strict-$k" eval --bench "$fx/ren_${s}_$k" \
        --atr-weights "$fx/z_$k.json" --abstain-floor=-inf --abstain-coverage=0 \
        --per-question "$d/ren_${s}_$k.jsonl" >/dev/null 2>&1
  done
done
python3 "$(dirname "$0")/replay.py" "$d"
