#!/bin/bash
# Step 21 of docs/retrieval.md: documented schemas whose comments are a
# data dictionary's sentences (retriever/evaluate/renamed -comments -prose:
# "This field represents the song name of the singer.") against comments
# that are the original names' words alone (step 13's -comments), on the
# seven folds' held-out databases, renamed and original, each scored by its
# fold's step-11 ensemble, abstention off, pooled. Run from the root of a
# checkout with PostgreSQL and pgvector.
#
#   bash docs/experiments/issue10-step21/prose.sh OUTDIR [BINARY...]
#
# Each BINARY (default bin/atrium) prints one row per benchmark and
# wording: P R CR F1 tables. dpl/doc: original/renamed schemas with word
# comments; ppl/prose: the same with prose comments.
set -eu
# shellcheck source=../foldlib.sh
source "$(dirname "$0")/../foldlib.sh"
fold_args "$@"
[ -f "$out/z_6.json" ] || fold_setup "$out"
[ -d "$out/doc_syn_6" ] || fold_rename "$out" doc dpl -comments
[ -d "$out/prose_syn_6" ] || fold_rename "$out" prose ppl -comments -prose
for b in "${bins[@]}"; do
  fold_rows "$b" "$out" dpl ppl doc prose
done
