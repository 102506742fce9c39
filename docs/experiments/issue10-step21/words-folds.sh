#!/bin/bash
# Step 21 of docs/retrieval.md: the word-vector semantic leg (words.patch
# applied to the tree this runs from) with a retrained scorer: per fold K
# given, four networks trained with ATRIUM_EXP_WORDS=SHARE and the
# operating point held within 0.05 tables of the fold's step-11 ensemble,
# into OUTDIR/xw_K.json, then the fold's rows (strict pairs, abstention
# off) for the retrained and for the shipped ensemble with the same
# embedder. Needs `ATRIUM_EXP_WORDS=SHARE strict.sh FOLDDIR NAME` first
# (the strict binaries, built from the patched tree).
#
#   bash docs/experiments/issue10-step21/words-folds.sh FOLDDIR NAME OUTDIR SHARE K...
set -eu
fx=$1 name=$2 out=$3 share=$4
shift 4
mkdir -p "$out"
go build -o "$out/atrium" ./cmd/atrium
export ATRIUM_EXP_WORDS=$share
train=(--bench ../shared/bench/spider --extra-questions ../shared/bench/spider-syn/train_spider.json --hold-out-every 7)
for k in "$@"; do
  [ -s "$out/xw_$k.json" ] ||
    "$out/atrium" train-atr "${train[@]}" --hold-out-shift "$k" --members 4 --tables-like "$fx/z_$k.json" --tables-band 0.05 \
      --verbose --out "$out/xw_$k.json" >"$out/log_$k.txt" 2>&1
  for s in sp syn; do
    for w in "$out/xw_$k.json" "$fx/z_$k.json"; do
      echo "fold $k $s $(basename "$w"): $("$fx/$name/strict-$k" eval --bench "$fx/ho_${s}_$k" --atr-weights "$w" --abstain-floor=-inf --abstain-coverage=0 2>&1 | grep -E '^benchmark|^atr\+exp' | tr '\n' ' ')"
    done
  done
done
