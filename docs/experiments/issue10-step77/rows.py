#!/usr/bin/env python3
"""Step 77: answerable P R CR F1 tables per wording, pooled over the seven
folds, from a directory of per-question files (sp_K.jsonl, syn_K.jsonl;
abstention off).

    python3 rows.py DIR"""
import json
import sys

d = sys.argv[1]
for w in ('sp', 'syn'):
    qs = []
    for k in range(7):
        qs += [q for q in map(json.loads, open(f'{d}/{w}_{k}.jsonl')) if not q['unanswerable']]
    n = len(qs)
    m = [sum(q[f] for q in qs) / n for f in ('precision', 'recall', 'complete', 'f1')]
    t = sum(len(q.get('chosen') or []) for q in qs) / n
    print('%-28s %-3s n=%d  %.3f %.3f %.3f %.3f %.3f' % (d[-28:], w, n, *m, t))
