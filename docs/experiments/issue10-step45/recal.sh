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
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../foldlib.sh
source "$here/../foldlib.sh"
for k in "$@"; do
  fold_recalibrate "$bin" "$fx" "$k" builtin "$fx/z_$k.json" "$out/rz_$k.json"
  echo "recalibrated fold $k $(date -u +%H:%M)"
done
