#!/bin/bash
# Step 19 of docs/retrieval.md: the shipped recipe retrained at this
# commit's features, one four-member ensemble per fold (OUTDIR/ens4_K.json),
# and each merged with the fold's step-11 ensemble (slot 9 zeroed, as
# strict.sh's fold_setup writes it to FOLDDIR/z_K.json) into an
# eight-member ensemble whose operating point is chosen again on the fold's
# validation questions (OUTDIR/m8_K.json). About 7 minutes per fold for the
# training and 2.5 for the recalibration on 2 cores. Run from the root of a
# checkout with PostgreSQL and pgvector, after
#
#   bash docs/experiments/issue10-step16/strict.sh FOLDDIR base
#   bash docs/experiments/issue10-step19/train.sh FOLDDIR OUTDIR
#
# Then score either set with the fold binaries of FOLDDIR/base: a copy of
# FOLDDIR whose z_K.json are OUTDIR's files (see rows.sh beside this).
set -eu
fx=${1:?usage: $0 FOLDDIR OUTDIR} out=${2:?usage: $0 FOLDDIR OUTDIR}
mkdir -p "$out"
go build -o "$out/atrium" ./cmd/atrium
train=(--bench ../shared/bench/spider --extra-questions ../shared/bench/spider-syn/train_spider.json --hold-out-every 7)
for k in 0 1 2 3 4 5 6; do
  "$out/atrium" train-atr "${train[@]}" --hold-out-shift "$k" --members 4 --verbose --out "$out/ens4_$k.json" >"$out/log_$k.txt" 2>&1
  python3 "$(dirname "$0")/merge.py" "$fx/z_$k.json" "$out/ens4_$k.json" "$out/m8raw_$k.json"
  "$out/atrium" train-atr "${train[@]}" --hold-out-shift "$k" --recalibrate "$out/m8raw_$k.json" --verbose --out "$out/m8_$k.json" >"$out/rlog_$k.txt" 2>&1
done
