#!/bin/bash
# Step 21 of docs/retrieval.md: false abstention at the shipped floors on
# schemas unlike Spider's: the seven folds' held-out databases as they are
# (ho), renamed word by word (ren), renamed and documented with the
# original names' words (doc) or with a data dictionary's sentences
# (prose), each scored by its fold's step-11 ensemble, pooled. Every
# question is answerable, so any abstention is a false one. Run after
# prose.sh (it makes doc and prose) from the root of a checkout.
#
#   bash docs/experiments/issue10-step21/falseabs.sh OUTDIR [BINARY]
#
# Prints per prefix and wording: questions, false abstention, P R CR F1.
set -eu
# shellcheck source=../foldlib.sh
source "$(dirname "$0")/../foldlib.sh"
fold_args "$@"
b=${bins[0]}
[ -d "$out/ren_syn_6" ] || fold_rename "$out" ren -
for pre in ho ren doc prose; do
  for s in sp syn; do
    for k in 0 1 2 3 4 5 6; do
      # shellcheck disable=SC2086 # EVAL_FLAGS is a list of flags
      "$b" eval --bench "$out/${pre}_${s}_$k" --atr-weights "$(fold_weights "$out" "$k")" ${EVAL_FLAGS:-} 2>&1 |
        grep -E '^benchmark|^atr\+expansion' | tr '\n' ' '
      echo
    done | python3 -c "
import re, sys
n, fa, acc = 0, 0.0, [0.0] * 4
for l in sys.stdin:
    q = int(re.search(r'(\d+) questions', l).group(1))
    v = l.split('atr+expansion')[-1].split()
    n += q
    fa += q * float(v[-1])
    acc = [a + q * float(x) for a, x in zip(acc, v[:4])]
print('%-6s %-3s n=%d  false_abstain %.4f  ' % ('$pre', '$s', n, fa / n) + ' '.join('%.3f' % (a / n) for a in acc))
"
  done
done
