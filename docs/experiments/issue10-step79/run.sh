#!/bin/bash
# Step 79 of docs/retrieval.md. Run from the root of a checkout with
# patch.diff applied: builds its strict-pairs binaries (the learned pairs of
# FOLDDIR/base/gK from issue10-step16/strict.sh) as FOLDDIR/s79/strict-K,
# then prints the folds' rows (foldlib.sh's fold_rows: each fold's shipped
# ensemble, abstention off) for each prior weight B given.
#
#   bash docs/experiments/issue10-step79/run.sh FOLDDIR B...
#
# STEP names the binaries' directory FOLDDIR/STEP (default s79; step 80's
# run.sh sets s80, for its own patch).
set -eu
fx=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../foldlib.sh
source "$here/../foldlib.sh"
d=$fx/${STEP:-s79}
fold_strict_build "$fx" "${STEP:-s79}"
for b in "$@"; do
  echo "B=$b"
  ATRIUM_EXP_WORDPRIOR=$b fold_rows "$d/strict-%k" "$fx" ho
done
