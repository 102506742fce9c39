#!/bin/bash
# Step 19 of docs/retrieval.md: the fold rows (P R CR F1 tables) and the
# abstention grid for one of train.sh's weight sets, scored by FOLDDIR/base's
# strict binaries; MAINBIN is a binary with that set's fold-0 file embedded
# as retriever/lite_weights.json (for the training unanswerable files).
#
#   bash docs/experiments/issue10-step19/rows.sh FOLDDIR OUTDIR ens4|m8 MAINBIN
set -eu
fx=${1:?} out=${2:?} set=${3:?} main=${4:?}
d=$out/folds-$set
mkdir -p "$d/$set"
for k in 0 1 2 3 4 5 6; do
  for w in sp syn; do ln -sfn "$fx/ho_${w}_$k" "$d/ho_${w}_$k"; done
  cp "$out/${set}_$k.json" "$d/z_$k.json"
  ln -sfn "$fx/base/strict-$k" "$d/$set/strict-$k"
done
# shellcheck source=../foldlib.sh
source docs/experiments/foldlib.sh
fold_rows "$fx/base/strict-%k" "$d" ho
bash docs/experiments/issue10-step16/abstain.sh "$d" "$set" "$main"
