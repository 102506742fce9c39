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
# shellcheck source=../foldlib.sh
source "$here/../foldlib.sh"
for k in "$@"; do
  fold_recalibrate "$bin" "$fx" "$k" words "$here/../issue10-step36/tw_$k.json" "$out/rw_$k.json"
  echo "recalibrated fold $k $(date -u +%H:%M)"
done
