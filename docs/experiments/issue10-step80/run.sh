#!/bin/bash
# Step 80 of docs/retrieval.md: step 79's run.sh with step 80's patch.diff
# applied to the checkout, its binaries in FOLDDIR/s80.
#
#   bash docs/experiments/issue10-step80/run.sh FOLDDIR B...
set -eu
STEP=s80 exec bash "$(dirname "$0")/../issue10-step79/run.sh" "$@"
