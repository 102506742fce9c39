#!/bin/bash
# Step 18 of docs/retrieval.md: the fold rows (foldlib.sh's fold_rows) for
# binaries strict.sh already built in FOLDDIR/NAME, so that one build serves
# every setting of knobs.patch's ATRIUM_X_* variables (set them in the
# environment). Run from the root of a checkout.
#
#   ATRIUM_X_RWLEMMA=1 bash docs/experiments/issue10-step18/rows.sh FOLDDIR NAME
set -eu
# shellcheck source=../foldlib.sh
source "$(dirname "$0")/../foldlib.sh"
fold_rows "${1:?usage: $0 FOLDDIR NAME}/${2:?usage: $0 FOLDDIR NAME}/strict-%k" "$1" ho
