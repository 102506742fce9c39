#!/bin/bash
# Step 78 of docs/retrieval.md. Builds this checkout's strict-pairs
# binaries (one per fold, the learned pairs of FOLDDIR/base/gK from
# issue10-step16/strict.sh) as FOLDDIR/s78/strict-K; writes the per-question
# files (abstention off, each fold's shipped ensemble FOLDDIR/z_K.json) of
# the folds' held-out questions with their unanswerable sets
# (issue10-step23/score.sh, STRICT=s78, into FOLDDIR/s23/z), and of the
# renamed (ren) and renamed-and-documented (renc) copies (foldlib.sh's
# fold_rename) into FOLDDIR/s78/PREFIX; then replays the rule on them.
#
#   bash docs/experiments/issue10-step78/run.sh FOLDDIR
set -eu
fx=$1
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../foldlib.sh
source "$here/../foldlib.sh"
d=$fx/s78
fold_strict_build "$fx" s78
STRICT=s78 bash "$here/../issue10-step23/score.sh" "$fx" "$fx" z >"$d/grid23.txt"
COSINE=word go run "$here/../issue10-step27/evidence" "$fx/s23/z" | tee "$d/evidence.txt"
for pre in ren renc; do
  fold_pq "$d/strict-%k" "$fx/z_%k.json" "$fx" "$pre" "$d/$pre"
done
