#!/bin/bash
# Step 42 of docs/retrieval.md: per fold K given, the fold's shipped
# ensemble (FOLDDIR/z_K.json) with prior.py's hybrid-score prior, and only
# the operating point chosen again on the held-out training questions
# (grouped split), held within 0.05 tables per question of z_K:
# OUTDIR/hz_K.json.
#
#   bash docs/experiments/issue10-step42/recal.sh FOLDDIR OUTDIR BINARY K...
set -eu
fx=$1 out=$2 bin=$3
shift 3
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../foldlib.sh
source "$here/../foldlib.sh"
for k in "$@"; do
  python3 "$here/prior.py" "$fx/z_$k.json" "$out/pz_$k.json" "${LAMBDA:-2}"
  fold_recalibrate "$bin" "$fx" "$k" builtin "$out/pz_$k.json" "$out/hz_$k.json"
  echo "recalibrated fold $k $(date -u +%H:%M)"
done
