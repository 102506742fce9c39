#!/bin/bash
# Step 14 of docs/retrieval.md: the seven cross-validation folds' held-out
# databases with every identifier's words run together, as PostgreSQL keeps
# an unquoted camelCase identifier (customerName → customername;
# retriever/evaluate/renamed -rename-words 0 -concat 1), the word-by-word
# renamed copy of step 12 (some identifiers run together), and the original
# schemas, each scored by its fold's step-11 ensemble (slot 9 zeroed, as the
# shipped file has it), abstention off, pooled over the folds. Run from the
# root of a checkout with PostgreSQL and pgvector (make test installs them).
#
#   bash docs/experiments/issue10-step14/folded.sh OUTDIR [BINARY...]
#
# Each BINARY (default bin/atrium) prints one row per benchmark and wording:
# P R CR F1 tables.
set -eu
# shellcheck source=../foldlib.sh
source "$(dirname "$0")/../foldlib.sh"
fold_args "$@"
fold_setup "$out"

# fold: every identifier run together; ren: renamed word by word; pl: the
# original schemas (no dumps, like the others).
fold_rename "$out" fold pl -rename-words 0 -concat 1
fold_rename "$out" ren -

for b in "${bins[@]}"; do
  fold_rows "$b" "$out" pl fold ren
done
