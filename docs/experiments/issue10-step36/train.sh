#!/bin/bash
# Step 36 of docs/retrieval.md: per fold K given, the shipped recipe (four
# members, Spider train + Spider-Syn train, one database in seven held out,
# shifted by K) trained on words-v1 vectors with the validation split by
# gold query (--valid-by-sql), the operating point chosen by training's own
# rule (no --tables-like), into OUTDIR/tw_K.json; then, per fold and
# wording, the held-out rows (strict pairs: FOLDDIR/base/strict-K from
# issue10-step16/strict.sh, abstention off) for tw_K with words-v1 and for
# the fold's shipped ensemble z_K with builtin.
#
#   bash docs/experiments/issue10-step36/train.sh FOLDDIR OUTDIR BINARY K...
set -eu
fx=$1 out=$2 bin=$3
shift 3
mkdir -p "$out"
train=(--bench ../shared/bench/spider --extra-questions ../shared/bench/spider-syn/train_spider.json --hold-out-every 7 --embedder words --valid-by-sql)
for k in "$@"; do
  [ -s "$out/tw_$k.json" ] ||
    "$bin" train-atr "${train[@]}" --hold-out-shift "$k" --members 4 --verbose --out "$out/tw_$k.json" >"$out/log_$k.txt" 2>&1
  echo "trained fold $k $(date -u +%H:%M)"
done
