#!/bin/bash
# The two abstention signals of docs/retrieval.md, step 12 (soft coverage
# through word vectors; the ensemble members' disagreement), judged by step
# 11's rule: the most abstention on the two training unanswerable files
# whose false abstention on the seven folds' held-out questions (strict
# pairs) stays within 0.03 in both wordings. Needs the experiment patch
# applied first, PostgreSQL with pgvector, and python3:
#
#   git apply docs/experiments/issue10-step12-abstention.patch
#   bash docs/experiments/issue10-step12/abstain-signals.sh /tmp/cv12
#
# About 15 minutes on 2 cores (7 of them building the strict binaries).
set -eu
out=${1:?usage: $0 OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
w=$here/../issue10-step11
bash "$here/../cv-prep.sh" "$out"
go build -o "$out/main-bin" ./cmd/atrium
off="--abstain-floor=-inf --abstain-coverage=0"
for soft in 0 0.8; do
  d=$out/soft_$soft; mkdir -p "$d"
  for k in 0 1 2 3 4 5 6; do
    "$out/strict-$k" eval --bench "$out/ho_sp_$k" --atr-weights "$w/ens4_$k.json" $off --abstain-soft $soft --per-question "$d/sp_$k.jsonl" >/dev/null 2>&1 &
    "$out/strict-$k" eval --bench "$out/ho_syn_$k" --atr-weights "$w/ens4_$k.json" $off --abstain-soft $soft --per-question "$d/syn_$k.jsonl" >/dev/null 2>&1
    wait
  done
  "$out/main-bin" eval --bench ../shared/bench/spider --questions "$PWD/retriever/evaluate/unanswerable/train.json" $off --abstain-soft $soft --per-question "$d/sp_train.jsonl" >/dev/null 2>&1 &
  "$out/main-bin" eval --bench ../shared/bench/spider-syn --questions "$PWD/retriever/evaluate/unanswerable/train_syn.json" $off --abstain-soft $soft --per-question "$d/syn_train.jsonl" >/dev/null 2>&1
  wait
  echo "== soft coverage at cosine $soft (0: off)"
  python3 "$here/abstain-grid.py" "$d"
done
