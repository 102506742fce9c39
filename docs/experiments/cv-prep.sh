#!/bin/bash
# Prepares the seven cross-validation folds of docs/retrieval.md (steps 10
# and 11) in OUTDIR: per fold k, held-out benchmark directories ho_sp_k and
# ho_syn_k (the databases train-atr --hold-out-every 7 --hold-out-shift k
# holds out, in Spider's and Spider-Syn's wording) and a binary strict-k
# whose learned vocabulary pairs leave those databases and their schema
# words out (strict pairs, step 9). Run from the root of a checkout; needs
# PostgreSQL with pgvector (make test installs it) and python3.
#
#   bash docs/experiments/cv-prep.sh /tmp/cv
set -eu
out=${1:?usage: $0 OUTDIR}
bench=$(cd ../shared/bench && pwd)
mkdir -p "$out"

python3 "$(dirname "$0")/folds.py" "$out" "$bench"

cp retriever/vocab/data/learned.tsv "$out/learned.shipped"
trap 'cp "$out/learned.shipped" retriever/vocab/data/learned.tsv' EXIT
for k in 0 1 2 3 4 5 6; do
  mkdir -p "$out/strict_$k"
  go run ./retriever/vocab/gen -hold-out-every 7 -hold-out-shift $k -hold-out-words -out "$out/strict_$k"
  cp "$out/strict_$k/learned.tsv" retriever/vocab/data/learned.tsv
  go build -o "$out/strict-$k" ./cmd/atrium
done
cp "$out/learned.shipped" retriever/vocab/data/learned.tsv

# Drop the training questions whose gold SQL the evaluator cannot parse
# (35 of 7,000).
for k in 0 1 2 3 4 5 6; do
  while :; do
    n=$("$out/strict-$k" eval --bench "$out/ho_sp_$k" --abstain-floor=-inf --abstain-coverage=0 2>&1 | grep -o 'question [0-9]*: gold' | grep -o '[0-9]*' || true)
    [ -z "$n" ] && break
    python3 -c "
import json
for w in ('sp','syn'):
    p='$out/ho_'+w+'_$k/dev.json'; d=json.load(open(p)); del d[$n]; json.dump(d,open(p,'w'))"
  done
done
