#!/bin/bash
# Step 22 of docs/retrieval.md: the abstention grid for the word-vector
# embedder with the retrained scorer. Per-question files with abstention
# off for the seven folds' held-out databases (step 21's strict binaries,
# built by `ATRIUM_EXP_WORDS=0.5 strict.sh FOLDDIR words50` from a tree with
# words.patch, each fold scored by its xw_K.json) and for the two training
# unanswerable files (MAINBIN, a binary of this tree, with --embedder words
# and fold 0's xw_0.json, the weights that would ship); then step 12's rule
# on the grid (issue10-step16/grid.py --extended).
#
#   bash docs/experiments/issue10-step22/abstain.sh FOLDDIR XWDIR MAINBIN
set -eu
fx=$1 xw=$2 main=$3
d=$fx/w22/pq off="--abstain-floor=-inf --abstain-coverage=0"
mkdir -p "$d"
export ATRIUM_EXP_WORDS=0.5
for k in 0 1 2 3 4 5 6; do
  for s in sp syn; do
    "$fx/words50/strict-$k" eval --bench "$fx/ho_${s}_$k" --atr-weights "$xw/xw_$k.json" $off --per-question "$d/${s}_$k.jsonl" >/dev/null 2>&1
  done
done
unset ATRIUM_EXP_WORDS
w=(--embedder words --atr-weights "$xw/xw_0.json")
"$main" eval "${w[@]}" --bench ../shared/bench/spider --questions "$PWD/retriever/evaluate/unanswerable/train.json" $off --per-question "$d/sp_train.jsonl" >/dev/null 2>&1
"$main" eval "${w[@]}" --bench ../shared/bench/spider-syn --questions "$PWD/retriever/evaluate/unanswerable/train_syn.json" $off --per-question "$d/syn_train.jsonl" >/dev/null 2>&1
python3 "$(dirname "$0")/../issue10-step16/grid.py" --extended "$d"
