#!/bin/bash
# Step 55 of docs/retrieval.md: each fold trained twice with the shipped recipe,
# bounded by the fold's shipped ensemble (z42_K: pad.py of z_K), in the
# experiment tree (slots.patch applied, run from /tmp/wt): treatment with the
# two schema soft-coverage slots, control with them held at 0
# (ATRIUM_EXP_CTRL=1). About 5 minutes per training on 2 cores.
set -u
cd /tmp/wt
train=(--bench ../shared/bench/spider --extra-questions ../shared/bench/spider-syn/train_spider.json --hold-out-every 7)
for k in 0 1 2 3 4 5 6; do
  for arm in t c; do
    o=/tmp/folds/w/${arm}55_$k.json
    [ -s "$o" ] && continue
    env_ctrl=""
    [ $arm = c ] && env_ctrl=1
    s=$(date +%s)
    ATRIUM_EXP_CTRL=$env_ctrl /tmp/e55 train-atr "${train[@]}" --hold-out-shift "$k" --members 4 \
      --tables-like /tmp/folds/z42_$k.json --tables-band 0.05 --verbose --out "$o" > /tmp/e55d/log_${arm}_$k.txt 2>&1
    echo "$arm $k rc=$? $(( $(date +%s) - s ))s $(date -u +%H:%M)" >> /tmp/e55d/progress
  done
done
echo done >> /tmp/e55d/progress
