#!/bin/bash
# Step 80 of docs/retrieval.md, a diagnostic after its failure: the fold
# ensembles at one shared threshold bias (-3, so the relative cut decides)
# and each relative cut given, without the prior (FOLDDIR/base binaries)
# and with it (FOLDDIR/s80 binaries, ATRIUM_EXP_WORDPRIOR=B), so the two
# can be compared at about the same number of tables.
#
#   bash docs/experiments/issue10-step80/frontier.sh FOLDDIR B 'CUT...' 'CUT...'
#   (the first list of cuts without the prior, the second with it)
set -eu
fx=$1 b=$2 cuts0=$3 cuts1=$4
# shellcheck source=../foldlib.sh
source docs/experiments/foldlib.sh
run() {
  local c=$1 d=$fx/cut-$1
  mkdir -p "$d"
  for k in 0 1 2 3 4 5 6; do
    for w in sp syn; do ln -sfn "$fx/ho_${w}_$k" "$d/ho_${w}_$k"; done
    python3 - "$fx/z_$k.json" "$c" "$d/z_$k.json" <<'PY'
import json, sys
src, c, out = sys.argv[1:4]
w = json.load(open(src))
w['threshold_bias'], w['relative_cut'] = -3.0, float(c)
json.dump(w, open(out, 'w'))
PY
  done
}
for c in $cuts0; do
  run "$c"
  echo "no prior, cut $c"
  fold_rows "$fx/base/strict-%k" "$fx/cut-$c" ho
done
for c in $cuts1; do
  run "$c"
  echo "prior $b, cut $c"
  ATRIUM_EXP_WORDPRIOR=$b fold_rows "$fx/s80/strict-%k" "$fx/cut-$c" ho
done
