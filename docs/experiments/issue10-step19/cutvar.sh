#!/bin/bash
# Step 19 of docs/retrieval.md: every fold's ensemble from WEIGHTS_%k.json
# (%k the fold) at one shared threshold bias and relative cut, scored by
# FOLDDIR/base's strict binaries, abstention off (fold_rows).
#
#   bash docs/experiments/issue10-step19/cutvar.sh FOLDDIR BIAS CUT 'OUT/m8_%k.json' DIR
set -eu
fx=${1:?} b=${2:?} c=${3:?} src=${4:?} d=${5:?}
mkdir -p "$d"
for k in 0 1 2 3 4 5 6; do
  for w in sp syn; do ln -sfn "$fx/ho_${w}_$k" "$d/ho_${w}_$k"; done
  python3 - "${src//%k/$k}" "$b" "$c" "$d/z_$k.json" <<'PY'
import json, sys
src, b, c, out = sys.argv[1:5]
w = json.load(open(src))
w['threshold_bias'], w['relative_cut'] = float(b), float(c)
json.dump(w, open(out, 'w'))
PY
done
# shellcheck source=../foldlib.sh
source docs/experiments/foldlib.sh
fold_rows "$fx/base/strict-%k" "$d" ho
