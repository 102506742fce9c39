#!/bin/bash
# Step 22 of docs/retrieval.md: the abstention grid with coverage counting
# word-vector neighbours at cosine COS (0: off). Per-question files with
# abstention off for the seven folds' held-out databases (FOLDDIR/NAME's
# strict binaries, built from this tree with each fold's strict learned
# pairs as strict.sh builds them; each fold's step-11 ensemble z_K) and for
# the two training unanswerable files (MAINBIN, shipped weights); then step
# 12's rule (issue10-step16/grid.py --extended).
#
#   bash docs/experiments/issue10-step22/abstain-cov.sh FOLDDIR NAME MAINBIN COS
set -eu
fx=$1 name=$2 main=$3 cos=$4
d=$fx/$name/pq-$cos off="--abstain-floor=-inf --abstain-coverage=0 --abstain-coverage-cosine=$cos"
mkdir -p "$d"
for k in 0 1 2 3 4 5 6; do
  for s in sp syn; do
    "$fx/$name/strict-$k" eval --bench "$fx/ho_${s}_$k" --atr-weights "$fx/z_$k.json" $off --per-question "$d/${s}_$k.jsonl" >/dev/null 2>&1
  done
done
"$main" eval --bench ../shared/bench/spider --questions "$PWD/retriever/evaluate/unanswerable/train.json" $off --per-question "$d/sp_train.jsonl" >/dev/null 2>&1
"$main" eval --bench ../shared/bench/spider-syn --questions "$PWD/retriever/evaluate/unanswerable/train_syn.json" $off --per-question "$d/syn_train.jsonl" >/dev/null 2>&1
python3 "$(dirname "$0")/../issue10-step16/grid.py" --extended "$d"
