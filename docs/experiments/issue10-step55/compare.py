#!/usr/bin/env python3
"""Step 55 of docs/retrieval.md: two scorers' per-question files (score.sh,
abstention off) compared on the folds both have, abstention off and at
floors F / C: P R CR F1 tables over answerable questions, complete recall
of gold-2+ questions, abstention and false abstention; then B - A.

    python3 compare.py DIR_A DIR_B [FLOOR COVERAGE]"""
import json
import os
import sys

da, db = sys.argv[1:3]
F, C = (float(sys.argv[3]), float(sys.argv[4])) if len(sys.argv) > 4 else (-1.5, 0.2)
load = lambda f: [json.loads(l) for l in open(f)]


def figures(qs, floors):
    def abst(q):
        return not q.get('selected') or (floors and (q['best_logit'] < F or q['coverage'] < C))
    a = [q for q in qs if not q['unanswerable']]
    u = [q for q in qs if q['unanswerable']]
    n = len(a)
    out = [sum(0 if abst(q) else q[k] for q in a) / n for k in ('precision', 'recall', 'complete', 'f1')]
    out.append(sum(0 if abst(q) else len(q.get('chosen') or []) for q in a) / n)
    g2 = [q for q in a if len(q['gold']) >= 2]
    out.append(sum(0 if abst(q) else q['complete'] for q in g2) / len(g2))
    out.append(sum(abst(q) for q in u) / len(u))
    out.append(sum(abst(q) for q in a) / n)
    return out


names = ['P', 'R', 'CR', 'F1', 'tables', 'CR2+', 'abstain', 'false']
for w in ('sp', 'syn'):
    ks = [k for k in range(7) if os.path.exists(f'{da}/{w}_{k}.jsonl') and os.path.exists(f'{db}/{w}_{k}.jsonl')]
    A, B = [], []
    for k in ks:
        A += load(f'{da}/{w}_{k}.jsonl')
        B += load(f'{db}/{w}_{k}.jsonl')
    assert [q['question'] for q in A] == [q['question'] for q in B]
    for floors in (False, True):
        fa, fb = figures(A, floors), figures(B, floors)
        tag = 'floors %.2f/%.2f' % (F, C) if floors else 'off'
        print('%-3s folds %s %-17s A ' % (w, ''.join(map(str, ks)), tag) + ' '.join('%s %.4f' % x for x in zip(names, fa)))
        print('%-3s folds %s %-17s B ' % (w, ''.join(map(str, ks)), tag) + ' '.join('%s %.4f' % x for x in zip(names, fb)))
        print('%-3s folds %s %-17s B-A ' % (w, ''.join(map(str, ks)), tag) + ' '.join('%s %+.4f' % (n, b - a) for n, a, b in zip(names, fa, fb)))
