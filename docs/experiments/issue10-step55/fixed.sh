#!/bin/bash
# Step 55 of docs/retrieval.md: both arms' fold ensembles at one shared
# operating point (threshold bias -3, so the relative cut decides; each
# file's expansion margins kept), per-question files by score.sh, run from
# the experiment tree (slots.patch applied).
#
#   bash docs/experiments/issue10-step55/fixed.sh FOLDDIR CUT [K...]
# with FOLDDIR/w/t55_K.json and c55_K.json trained (train.sh) and the
# experiment tree's strict binaries in FOLDDIR/e55.
set -eu
fx=${1:?} cut=${2:?}
shift 2
ks=("$@")
[ ${#ks[@]} -eq 0 ] && ks=(0 1 2 3 4 5 6)
for arm in t c; do
  for k in "${ks[@]}"; do
    python3 - "$fx/w/${arm}55_$k.json" "$cut" "$fx/w/${arm}55x${cut}_$k.json" <<'PY'
import json, sys
src, c, out = sys.argv[1:4]
w = json.load(open(src))
w['threshold_bias'], w['relative_cut'] = -3.0, float(c)
json.dump(w, open(out, 'w'))
PY
  done
  ctrl=""
  [ $arm = c ] && ctrl=1
  ATRIUM_EXP_CTRL=$ctrl STRICT=e55 bash docs/experiments/issue10-step23/score.sh "$fx" "$fx/w" "${arm}55x$cut" "${ks[@]}" >/dev/null
done
