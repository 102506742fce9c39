#!/bin/bash
# Step 13 of docs/retrieval.md: the seven cross-validation folds' held-out
# databases renamed word by word (retriever/evaluate/renamed) with and
# without comments documenting the original names, and the original
# schemas with and without the same comments, each scored by its fold's
# step-11 ensemble (ens4_K.json, with the never-trained comment slot's
# weights zeroed as the shipped file has them), abstention off, pooled over
# the folds. Run from the root of a checkout with PostgreSQL and pgvector
# (make test installs them); a few minutes per binary on 2 cores.
#
#   bash docs/experiments/issue10-step13/documented.sh OUTDIR [BINARY...]
#
# Each BINARY (default bin/atrium) prints one row per benchmark and wording:
# P R CR F1 tables. Step 13 compared ee9a524's binary with the change's.
set -eu
# shellcheck source=../foldlib.sh
source "$(dirname "$0")/../foldlib.sh"
fold_args "$@"
fold_setup "$out"

# ren/pl: renamed and original schemas, no comments; doc/dpl: the same,
# documented. (The renamer skips questions whose gold SQL no parser reads.)
fold_rename "$out" ren pl
fold_rename "$out" doc dpl -comments

for b in "${bins[@]}"; do
  fold_rows "$b" "$out" pl dpl ren doc
done
