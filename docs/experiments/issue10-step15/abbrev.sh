#!/bin/bash
# Step 15 of docs/retrieval.md: the seven cross-validation folds' held-out
# databases with every identifier word that abbrev.tsv abbreviates replaced
# by an abbreviation it lists (retriever/evaluate/renamed -rename-words 1
# -abbreviations-only -concat 0), and the original schemas, each scored by
# its fold's step-11 ensemble (slot 9 zeroed, as the shipped file has it),
# abstention off, pooled over the folds. Binaries built with abbrev.tsv
# emptied (its '#' lines kept) measure how much of the list a guesser
# recovers. Run from the root of a checkout with PostgreSQL and pgvector
# (make test installs them) whose abbrev.tsv is the shipped one.
#
#   bash docs/experiments/issue10-step15/abbrev.sh OUTDIR [BINARY...]
#
# Each BINARY (default bin/atrium) prints one row per benchmark and wording:
# P R CR F1 tables.
set -eu
# shellcheck source=../foldlib.sh
source "$(dirname "$0")/../foldlib.sh"
fold_args "$@"
fold_setup "$out"

fold_rename "$out" abbr pl -rename-words 1 -abbreviations-only -concat 0

for b in "${bins[@]}"; do
  fold_rows "$b" "$out" pl abbr
done
