#!/bin/bash
# Step 16 of docs/retrieval.md, abstention: per-question files with
# abstention off for the seven folds' held-out databases (each fold's strict
# binary and ensemble, as strict.sh builds them in FOLDDIR/NAME) and for the
# two training unanswerable files (MAINBIN, shipped weights), then the
# (floor, coverage) grid by step 12's rule (grid.py): the most mean training
# abstention whose pooled held-out false abstention is at most 0.03 in both
# wordings.
#
#   bash docs/experiments/issue10-step16/strict.sh FOLDDIR NAME   # first
#   bash docs/experiments/issue10-step16/abstain.sh FOLDDIR NAME MAINBIN
set -eu
fx=$1 name=$2 main=$3
s=$fx/$name d=$fx/$name/pq off="--abstain-floor=-inf --abstain-coverage=0"
mkdir -p "$d"
for k in 0 1 2 3 4 5 6; do
  "$s/strict-$k" eval --bench "$fx/ho_sp_$k" --atr-weights "$fx/z_$k.json" $off --per-question "$d/sp_$k.jsonl" >/dev/null 2>&1
  "$s/strict-$k" eval --bench "$fx/ho_syn_$k" --atr-weights "$fx/z_$k.json" $off --per-question "$d/syn_$k.jsonl" >/dev/null 2>&1
done
"$main" eval --bench ../shared/bench/spider --questions "$PWD/retriever/evaluate/unanswerable/train.json" $off --per-question "$d/sp_train.jsonl" >/dev/null 2>&1
"$main" eval --bench ../shared/bench/spider-syn --questions "$PWD/retriever/evaluate/unanswerable/train_syn.json" $off --per-question "$d/syn_train.jsonl" >/dev/null 2>&1
python3 "$(dirname "$0")/grid.py" "$d"
