#!/bin/bash
# Step 16 of docs/retrieval.md: the seven folds' held-out training
# databases, each scored by a binary whose learned vocabulary pairs leave
# that fold's databases and their schema words out (strict pairs, step 9:
# the held-out rewordings are as new to the pairs as a dev set's) and by its
# fold's step-11 ensemble, abstention off, pooled. The binaries are built
# from the working tree's vocabulary data, so apply a change (for example
# hyponyms.patch, then `go run ./retriever/vocab/gen`) before running.
# Run from the root of a checkout with PostgreSQL and pgvector.
#
#   bash docs/experiments/issue10-step16/strict.sh OUTDIR NAME
#
# Prints one row per wording: P R CR F1 tables (fold_rows, foldlib.sh).
set -eu
# shellcheck source=../foldlib.sh
source "$(dirname "$0")/../foldlib.sh"
fold_args "$1"
name=${2:?usage: $0 OUTDIR NAME}
[ -f "$out/z_6.json" ] || fold_setup "$out"
go build -o "$out/atrium-any" ./cmd/atrium

# Drop the training questions whose gold SQL the evaluator cannot parse
# (35 of 7,000), as cv-prep.sh does.
for k in 0 1 2 3 4 5 6; do
  while :; do
    n=$("$out/atrium-any" eval --bench "$out/ho_sp_$k" --abstain-floor=-inf --abstain-coverage=0 2>&1 | grep -o 'question [0-9]*: gold' | grep -o '[0-9]*' || true)
    [ -z "$n" ] && break
    python3 - "$out" "$k" "$n" <<'PY'
import json, sys
out, k, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
for w in ('sp', 'syn'):
    p = f'{out}/ho_{w}_{k}/dev.json'
    d = json.load(open(p))
    del d[n]
    json.dump(d, open(p, 'w'))
PY
  done
done

d=$out/$name
mkdir -p "$d"
cp retriever/vocab/data/learned.tsv "$d/learned.keep"
trap 'cp "$d/learned.keep" retriever/vocab/data/learned.tsv' EXIT
for k in 0 1 2 3 4 5 6; do
  mkdir -p "$d/g$k"
  go run ./retriever/vocab/gen -hold-out-every 7 -hold-out-shift $k -hold-out-words -out "$d/g$k" >/dev/null 2>&1
  cp "$d/g$k/learned.tsv" retriever/vocab/data/learned.tsv
  go build -o "$d/strict-$k" ./cmd/atrium
done
fold_rows "$d/strict-%k" "$out" ho
