#!/bin/bash
# Step 62 of docs/retrieval.md (a diagnostic): each held-out fold question
# asked in a pool of its own database only (pool_dbs), abstention off, by
# the fold's strict binary and shipped ensemble; pooled P R CR F1 tables.
#
#   bash docs/experiments/issue10-step62/onedb.sh FOLDDIR [STRICT]
set -eu
fx=$1 st=${2:-base}
for w in sp syn; do
  for k in 0 1 2 3 4 5 6; do
    python3 -c "
import json, sys
d = json.load(open('$fx/ho_${w}_$k/dev.json'))
for q in d: q['pool_dbs'] = [q['db_id']]
json.dump(d, open('$fx/one_${w}_$k.json', 'w'))"
    "$fx/$st/strict-$k" eval --bench "$fx/ho_${w}_$k" --questions "$fx/one_${w}_$k.json" --atr-weights "$fx/z_$k.json" \
      --abstain-floor=-inf --abstain-coverage=0 2>&1 | grep -E '^benchmark|^atr\+expansion' | tr '\n' ' '
    echo
  done | python3 -c "
import re, sys
n, acc = 0, [0.0] * 5
for l in sys.stdin:
    q = int(re.search(r'(\d+) questions', l).group(1))
    v = l.split('atr+expansion')[-1].split()
    n += q; acc = [a + q * float(x) for a, x in zip(acc, v[:5])]
print('$w one database: P R CR F1 tables', ' '.join('%.3f' % (a / n) for a in acc))"
done
