#!/bin/bash
# Step 81 of docs/retrieval.md: step 80's binaries (FOLDDIR/s80, prior at
# ATRIUM_EXP_WORDPRIOR=2) with the fold ensembles at bias -3 and cut 1.25
# (FOLDDIR/cut-1.25, made by issue10-step80/frontier.sh): per-question
# files of the folds' held-out questions with their unanswerable sets
# (issue10-step23/score.sh into FOLDDIR/s23/p2, then grid.py), and of the renamed copies
# (ren, renc) into FOLDDIR/s81; rows.py prints their rows.
#
#   bash docs/experiments/issue10-step81/run.sh FOLDDIR
set -eu
fx=$1
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../foldlib.sh
source "$here/../foldlib.sh"
export ATRIUM_EXP_WORDPRIOR=2
for k in 0 1 2 3 4 5 6; do ln -sfn z_$k.json "$fx/cut-1.25/p2_$k.json"; done
STRICT=s80 bash "$here/../issue10-step23/score.sh" "$fx" "$fx/cut-1.25" p2
for pre in ren renc; do
  fold_pq "$fx/s80/strict-%k" "$fx/cut-1.25/z_%k.json" "$fx" "$pre" "$fx/s81/$pre"
  python3 "$here/../issue10-step77/rows.py" "$fx/s81/$pre"
done
