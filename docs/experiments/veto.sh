#!/bin/bash
# The generalisation veto of steps 30 and 31 of docs/retrieval.md, as one
# command: a candidate binary NEW against the release binary OLD on the
# seven folds' held-out databases as they are (ho), renamed word by word
# (ren), and renamed and documented by comments (doc: the names' words;
# prose: a data dictionary's sentences), each scored by its fold's shipped
# ensemble with each binary's own defaults. NEW fails when, on any renamed
# set in either wording, its F1 or complete recall falls more than 0.005
# below OLD's (abstention off, and at each binary's floors) or its false
# abstention rises more than 0.005. Run it, and write it into a change's
# criteria, before reading a dev set. Run from the root of a checkout with
# PostgreSQL and pgvector; about 25 minutes on 2 cores.
#
#   bash docs/experiments/veto.sh FOLDDIR OLD NEW
#
# FOLDDIR is the folds' directory (foldlib.sh's fold_setup makes it when
# missing); OLD and NEW are atrium binaries. The rows it compares carry
# three decimals (four for false abstention): a difference of exactly
# 0.005 is a boundary case to settle from per-question files, as step 30
# did. Its comparison reproduces both vetoes from steps 30 and 31's logs.
set -eu
out=${1:?usage: $0 FOLDDIR OLD NEW}
old=${2:?usage: $0 FOLDDIR OLD NEW}
new=${3:?usage: $0 FOLDDIR OLD NEW}
here=$(dirname "$0")
# VETO_LOG keeps each side's rows in a directory of your choosing; a side
# whose rows are already there is not run again (so OLD can be scored while
# NEW is still being built).
log=${VETO_LOG:-$(mktemp -d)}
mkdir -p "$log"
side() { # FILE WEIGHTS FLAGS SCRIPT BINARY
  if [ ! -s "$log/$1" ]; then
    WEIGHTS=$2 EVAL_FLAGS=$3 bash "$here/issue10-step21/$4" "$out" "$5" > "$log/$1.tmp"
    mv "$log/$1.tmp" "$log/$1"
  fi
}
# OLD_WEIGHTS / NEW_WEIGHTS (a path with %k for the fold) and OLD_FLAGS /
# NEW_FLAGS (eval flags) let each side have its own scorer and settings
# (step 36: a retrained scorer on words-v1 with its own floors).
side off_old "${OLD_WEIGHTS:-}" "${OLD_FLAGS:-}" prose.sh "$old"
side off_new "${NEW_WEIGHTS:-}" "${NEW_FLAGS:-}" prose.sh "$new"
cat "$log/off_old" "$log/off_new" > "$log/off"
side fa_old "${OLD_WEIGHTS:-}" "${OLD_FLAGS:-}" falseabs.sh "$old"
side fa_new "${NEW_WEIGHTS:-}" "${NEW_FLAGS:-}" falseabs.sh "$new"
python3 - "$log" "$old" "$new" <<'PY'
import re, sys
log, old, new = sys.argv[1:]
# prose.sh: "BIN PREFIX WORDING n=N P R CR F1 tables"; dpl/ppl are the
# original schemas with comments, doc/prose the renamed ones.
off = {}
for l in open(f'{log}/off'):
    f = l.split()
    if len(f) >= 9 and f[3].startswith('n='):
        off[(f[0], f[1], f[2])] = [float(x) for x in f[4:8]]
def fa(path):
    rows = {}
    for l in open(path):
        m = re.match(r'(\S+)\s+(\S+)\s+n=\d+\s+false_abstain (\S+)\s+(\S+) (\S+) (\S+) (\S+)', l)
        if m:
            rows[(m.group(1), m.group(2))] = [float(x) for x in m.group(3, 4, 5, 6, 7)]
    return rows
fo, fn = fa(f'{log}/fa_old'), fa(f'{log}/fa_new')
bad = []
print('abstention off (F1 / CR):        old            new')
for (b, pre, w), v in sorted(off.items()):
    if b != old.split('/')[-1] and b != old:
        continue
    n = off.get((new.split('/')[-1], pre, w)) or off.get((new, pre, w))
    if n is None:
        continue
    print('  %-6s %-3s              %.4f / %.4f  %.4f / %.4f' % (pre, w, v[3], v[2], n[3], n[2]))
    if pre in ('doc', 'prose') and (v[3] - n[3] > 0.005 or v[2] - n[2] > 0.005):
        bad.append(f'{pre} {w} abstention off: F1/CR {v[3]:.4f}/{v[2]:.4f} -> {n[3]:.4f}/{n[2]:.4f}')
print("each binary's floors (false, F1, CR):")
for k in sorted(fo):
    if k not in fn:
        continue
    v, n = fo[k], fn[k]
    print('  %-6s %-3s  %.4f %.3f %.3f    %.4f %.3f %.3f' % (k[0], k[1], v[0], v[4], v[3], n[0], n[4], n[3]))
    if k[0] in ('ren', 'doc', 'prose') and (n[0] - v[0] > 0.005 or v[4] - n[4] > 0.005 or v[3] - n[3] > 0.005):
        bad.append(f'{k[0]} {k[1]} at floors: false {v[0]:.4f} -> {n[0]:.4f}, F1 {v[4]:.3f} -> {n[4]:.3f}, CR {v[3]:.3f} -> {n[3]:.3f}')
print('VETO' if bad else 'pass')
for b in bad:
    print('  ' + b)
PY
