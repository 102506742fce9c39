#!/bin/bash
# Step 22 of docs/retrieval.md: word vectors for the candidates only
# (--embedder words with the shipped fold ensembles, which were trained on
# builtin vectors: the retriever gives them the builtin cosine from the
# vectors' prefix: prefix.patch, applied to the tree, not kept). FOLDDIR/NAME
# holds strict binaries built from that tree with each fold's strict learned pairs (as strict.sh builds them)
# and MAINBIN a binary of this tree. Prints the pooled rows (P R CR F1
# tables, and C10 / C50 complete recall) per wording, then the abstention
# grid (issue10-step16/grid.py --extended) from the per-question files.
#
#   bash docs/experiments/issue10-step22/prefix.sh FOLDDIR NAME MAINBIN [EMBEDDER]
set -eu
fx=$1 name=$2 main=$3 emb=${4:-words}
d=$fx/$name/pq-$emb off="--abstain-floor=-inf --abstain-coverage=0"
mkdir -p "$d"
for s in sp syn; do
  for k in 0 1 2 3 4 5 6; do
    "$fx/$name/strict-$k" eval --embedder "$emb" --bench "$fx/ho_${s}_$k" --atr-weights "$fx/z_$k.json" $off --per-question "$d/${s}_$k.jsonl" 2>&1 |
      grep -E '^benchmark|^atr\+expansion|^hybrid@(10|50)' | tr '\n' ' '
    echo
  done | python3 -c "
import re, sys
n, acc, c10, c50 = 0, [0.0] * 5, 0.0, 0.0
for l in sys.stdin:
    q = int(re.search(r'(\d+) questions', l).group(1))
    v = l.split('atr+expansion')[-1].split()[:5]
    n += q
    acc = [a + q * float(x) for a, x in zip(acc, v)]
    c10 += q * float(l.split('hybrid@10')[1].split()[2])
    c50 += q * float(l.split('hybrid@50')[1].split()[2])
print('$emb $s n=%d  ' % n + ' '.join('%.3f' % (a / n) for a in acc) + '  C10 %.3f C50 %.3f' % (c10 / n, c50 / n))
"
done
"$main" eval --embedder "$emb" --bench ../shared/bench/spider --questions "$PWD/retriever/evaluate/unanswerable/train.json" $off --per-question "$d/sp_train.jsonl" >/dev/null 2>&1
"$main" eval --embedder "$emb" --bench ../shared/bench/spider-syn --questions "$PWD/retriever/evaluate/unanswerable/train_syn.json" $off --per-question "$d/syn_train.jsonl" >/dev/null 2>&1
python3 "$(dirname "$0")/../issue10-step16/grid.py" --extended "$d"
