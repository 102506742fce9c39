# Shared by the fold experiments of docs/retrieval.md (steps 13-15); source
# it from the root of a checkout.
#
#   fold_args "$@"     reads OUTDIR [BINARY...] into $out (created) and
#                       $bins (default bin/atrium)
#   fold_setup OUTDIR   the seven folds' held-out benchmarks (folds.py) and
#                       each fold's step-11 ensemble with slot 9 zeroed, as
#                       the shipped weights have it (OUTDIR/z_K.json)
#   fold_rename OUTDIR PREFIX PLAIN [FLAG...]
#                       each fold's held-out benchmark, both wordings, through
#                       retriever/evaluate/renamed with FLAGs into
#                       OUTDIR/PREFIX_WORDING_K (and the original schemas into
#                       OUTDIR/PLAIN_WORDING_K unless PLAIN is -)
#   fold_rows BINARY OUTDIR PREFIX...
#                       for each PREFIX and wording (sp, syn), BINARY's
#                       default pipeline on OUTDIR/PREFIX_WORDING_K, each fold
#                       scored by its own ensemble, abstention off, pooled:
#                       one row of P R CR F1 tables; a BINARY with %k in it
#                       names one binary per fold (strict pairs, step 16)
#   fold_weights OUTDIR K
#                       fold K's weights file: $WEIGHTS with %k replaced by K
#                       (step 36: a retrained scorer's files), else the
#                       fold's shipped ensemble OUTDIR/z_K.json; $EVAL_FLAGS,
#                       when set, adds flags to every eval (--embedder words)
#   fold_strict_build FOLDDIR NAME
#                       this checkout's binaries with each fold's strict
#                       learned pairs (FOLDDIR/base/gK, made by
#                       issue10-step16/strict.sh) as FOLDDIR/NAME/strict-K,
#                       for a change that needs no new pairs (steps 78-80);
#                       the checkout's learned.tsv is put back
#   fold_pq BINARY WEIGHTS FOLDDIR PREFIX OUT
#                       per-question files (abstention off) of
#                       FOLDDIR/PREFIX_WORDING_K as OUT/WORDING_K.jsonl,
#                       BINARY and WEIGHTS with %k for the fold; files
#                       already there are kept (steps 77, 78, 81)
#   fold_recalibrate BINARY FOLDDIR K EMBEDDER WEIGHTS OUT
#                       WEIGHTS' networks (a comma-separated list is pooled)
#                       with only the operating point chosen again on fold
#                       K's training questions (grouped split, EMBEDDER's
#                       catalog), within 0.05 tables per question of the
#                       fold's shipped ensemble FOLDDIR/z_K.json: OUT, its
#                       log beside it (steps 37, 40, 42, 45); skipped when
#                       OUT exists

fold_args() {
  out=${1:?usage: $0 OUTDIR [BINARY...]}
  shift
  bins=("$@")
  [ ${#bins[@]} -eq 0 ] && bins=(bin/atrium)
  mkdir -p "$out"
}

fold_setup() {
  local out=$1 lib
  lib=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  python3 "$lib/folds.py" "$out" "$(cd ../shared/bench && pwd)"
  python3 - "$out" "$lib/issue10-step11" <<'PY'
import json, sys
out, ens = sys.argv[1:3]
for k in range(7):
    m = json.load(open(f'{ens}/ens4_{k}.json'))
    for mem in m['members']:
        for row in mem['w1']:
            row[9] = 0.0
    json.dump(m, open(f'{out}/z_{k}.json', 'w'))
PY
}

fold_rename() {
  local out=$1 pre=$2 plain=$3 s k
  shift 3
  for k in 0 1 2 3 4 5 6; do
    for s in sp syn; do
      local pl=()
      [ "$plain" = - ] || pl=(-plain "$out/${plain}_${s}_$k")
      go run ./retriever/evaluate/renamed -bench "$out/ho_${s}_$k" -out "$out/${pre}_${s}_$k" "${pl[@]}" "$@" 2>/dev/null
    done
  done
}

fold_weights() {
  local w=${WEIGHTS:-$1/z_%k.json}
  echo "${w//%k/$2}"
}

fold_recalibrate() {
  local bin=$1 fx=$2 k=$3 emb=$4 w=$5 o=$6
  [ -s "$o" ] && return 0
  "$bin" train-atr --bench ../shared/bench/spider --extra-questions ../shared/bench/spider-syn/train_spider.json \
    --hold-out-every 7 --hold-out-shift "$k" --embedder "$emb" --valid-by-sql --verbose \
    --recalibrate "$w" --tables-like "$fx/z_$k.json" --tables-band 0.05 --out "$o" >"${o%.json}.log" 2>&1
}

fold_rows() {
  local b=$1 out=$2 pre s k
  shift 2
  for pre in "$@"; do
    for s in sp syn; do
      for k in 0 1 2 3 4 5 6; do
        # shellcheck disable=SC2086 # EVAL_FLAGS is a list of flags
        "${b//%k/$k}" eval --bench "$out/${pre}_${s}_$k" --atr-weights "$(fold_weights "$out" "$k")" --abstain-floor=-inf --abstain-coverage=0 ${EVAL_FLAGS:-} 2>&1 |
          grep -E '^benchmark|^atr\+expansion' | tr '\n' ' '
        echo
      done | python3 -c "
import re, sys
n, acc = 0, [0.0] * 5
for l in sys.stdin:
    q = int(re.search(r'(\d+) questions', l).group(1))
    v = l.split('atr+expansion')[-1].split()[:5]
    n += q
    acc = [a + q * float(x) for a, x in zip(acc, v)]
print('%-12s %-4s %-3s n=%d  ' % ('$(basename "$b")', '$pre', '$s', n) + ' '.join('%.3f' % (a / n) for a in acc))
"
    done
  done
}

fold_strict_build() {
  local fx=$1 d=$1/$2 k
  mkdir -p "$d"
  cp retriever/vocab/data/learned.tsv "$d/learned.keep"
  for k in 0 1 2 3 4 5 6; do
    [ -x "$d/strict-$k" ] && continue
    cp "$fx/base/g$k/learned.tsv" retriever/vocab/data/learned.tsv
    if ! go build -o "$d/strict-$k" ./cmd/atrium; then
      cp "$d/learned.keep" retriever/vocab/data/learned.tsv
      return 1
    fi
  done
  cp "$d/learned.keep" retriever/vocab/data/learned.tsv
}

fold_pq() {
  local b=$1 w=$2 fx=$3 pre=$4 o=$5 k s
  mkdir -p "$o"
  for k in 0 1 2 3 4 5 6; do
    for s in sp syn; do
      [ -s "$o/${s}_$k.jsonl" ] ||
        "${b//%k/$k}" eval --bench "$fx/${pre}_${s}_$k" --atr-weights "${w//%k/$k}" \
          --abstain-floor=-inf --abstain-coverage=0 --per-question "$o/${s}_$k.jsonl" >/dev/null 2>&1
    done
  done
}
