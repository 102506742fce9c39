#!/bin/bash
# Step 23 of docs/retrieval.md: per-question files, abstention off, for the
# seven folds' held-out databases with their unanswerable sets (foldun),
# each fold scored by its strict binary (issue10-step16/strict.sh FOLDDIR
# base) and the weights WDIR/PREFIX_K.json; then grid.py on them.
#
#   go run ./docs/experiments/issue10-step23/foldun FOLDDIR
#   bash docs/experiments/issue10-step23/score.sh FOLDDIR WDIR PREFIX [K...]
#
# EVAL_FLAGS adds flags to every eval (step 24: EVAL_FLAGS='--embedder words');
# STRICT names strict.sh's binary set (default base; step 29: rwctx).
set -eu
fx=$1 wd=$2 pre=$3
shift 3
ks=("$@")
[ ${#ks[@]} -eq 0 ] && ks=(0 1 2 3 4 5 6)
d=$fx/s23/$pre
mkdir -p "$d"
for k in "${ks[@]}"; do
  for s in sp syn; do
    [ -s "$d/${s}_$k.jsonl" ] ||
      "$fx/${STRICT:-base}/strict-$k" eval --bench "$fx/ho_${s}_$k" --unanswerable "$fx/un_${s}_$k.json" \
        --atr-weights "$wd/${pre}_$k.json" --abstain-floor=-inf --abstain-coverage=0 ${EVAL_FLAGS:-} \
        --per-question "$d/${s}_$k.jsonl" >/dev/null 2>&1
  done
done
python3 "$(dirname "$0")/grid.py" "$d" "${ks[@]}"
