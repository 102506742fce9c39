#!/bin/bash
# Step 17 of docs/retrieval.md: per-question files of the seven folds'
# held-out databases, both wordings, each fold's strict binary and
# ensemble (strict.sh of step 16 builds them in FOLDDIR/NAME), abstention
# off, with the soft-schema patch's experiment variables passed through
# (ATRIUM_EXP_SOFTSCHEMA=λ, ATRIUM_EXP_SOFTMODE=2 for "best boosted").
# bootstrap.py compares two such directories per database.
#
#   bash docs/experiments/issue10-step16/strict.sh FOLDDIR NAME   # first, with the patch applied
#   ATRIUM_EXP_SOFTSCHEMA=0 bash docs/experiments/issue10-step17/per-question.sh FOLDDIR NAME OUT0
#   ATRIUM_EXP_SOFTSCHEMA=6 bash docs/experiments/issue10-step17/per-question.sh FOLDDIR NAME OUT6
#   python3 docs/experiments/issue10-step17/bootstrap.py OUT0 OUT6
set -eu
fx=$1 name=$2 d=$3
mkdir -p "$d"
for s in sp syn; do
  for k in 0 1 2 3 4 5 6; do
    "$fx/$name/strict-$k" eval --bench "$fx/ho_${s}_$k" --atr-weights "$fx/z_$k.json" \
      --abstain-floor=-inf --abstain-coverage=0 --per-question "$d/${s}_$k.jsonl" >"$d/${s}_$k.txt" 2>&1
  done
done
