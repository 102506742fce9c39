#!/bin/bash
# Step 77 of docs/retrieval.md: per fold K given, the shipped recipe (four
# members, builtin, Spider train + Spider-Syn train, one database in seven
# held out, shifted by K) trained at this checkout's code, so its candidate
# lists hold step 73's word-vector leg; validation split by gold query and
# operating point held within 0.05 tables per question of the fold's
# shipped ensemble FOLDDIR/z_K.json (foldlib.sh's fold_setup): OUTDIR/lk_K.json.
#
#   bash docs/experiments/issue10-step77/train.sh FOLDDIR OUTDIR BINARY K...
set -eu
fx=$1 out=$2 bin=$3
shift 3
mkdir -p "$out"
train=(--bench ../shared/bench/spider --extra-questions ../shared/bench/spider-syn/train_spider.json --hold-out-every 7 --valid-by-sql)
for k in "$@"; do
  [ -s "$out/lk_$k.json" ] ||
    "$bin" train-atr "${train[@]}" --hold-out-shift "$k" --members 4 --tables-like "$fx/z_$k.json" --tables-band 0.05 \
      --verbose --out "$out/lk_$k.json" >"$out/log_$k.txt" 2>&1
  echo "trained fold $k $(date -u +%H:%M)"
done
