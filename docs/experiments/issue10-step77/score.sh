#!/bin/bash
# Step 77 of docs/retrieval.md: the retrained folds' scorers OUTDIR/lk_K.json
# (train.sh) scored by the strict base binaries (issue10-step16/strict.sh)
# with abstention off: per-question files of the held-out questions with
# the folds' unanswerable sets (issue10-step23/score.sh, then its grid.py),
# and of the renamed (ren) and renamed-and-documented (renc) copies
# (foldlib.sh's fold_rename) into FOLDDIR/s77/PREFIX; rows.py prints each
# set's answerable P R CR F1 tables. The shipped fold ensembles z_K get the
# same files when FOLDDIR/s77 lacks them.
#
#   bash docs/experiments/issue10-step77/score.sh FOLDDIR OUTDIR
set -eu
fx=$1 wd=$2
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../foldlib.sh
source "$here/../foldlib.sh"
bash "$here/../issue10-step23/score.sh" "$fx" "$wd" lk >"$wd/grid-lk.txt"
for w in z lk; do
  wf=$fx/z_%k.json
  [ $w = lk ] && wf=$wd/lk_%k.json
  for pre in ren renc; do
    fold_pq "$fx/base/strict-%k" "$wf" "$fx" "$pre" "$fx/s77/$w/$pre"
  done
done
for d in "$fx/s23/z" "$fx/s23/lk" "$fx"/s77/*/ren "$fx"/s77/*/renc; do
  python3 "$here/rows.py" "$d"
done
