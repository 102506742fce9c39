#!/bin/bash
# Step 40 of docs/retrieval.md: per fold K given, the fold's shipped ensemble
# (FOLDDIR/z_K.json) and step 37's networks (issue10-step37/rw_K.json)
# pooled into one eight-network ensemble, only the operating point chosen
# again, held within 0.05 tables per question of z_K: OUTDIR/pw_K.json.
#
#   bash docs/experiments/issue10-step40/pool.sh FOLDDIR OUTDIR BINARY K...
set -eu
fx=$1 out=$2 bin=$3
shift 3
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../foldlib.sh
source "$here/../foldlib.sh"
for k in "$@"; do
  fold_recalibrate "$bin" "$fx" "$k" words "$fx/z_$k.json,$here/../issue10-step37/rw_$k.json" "$out/pw_$k.json"
  echo "pooled fold $k $(date -u +%H:%M)"
done
