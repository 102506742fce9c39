#!/usr/bin/env python3
"""Step 44 of docs/retrieval.md: abstention decided by one scorer's run
(DIR_A, e.g. z_K), the selection of a question it does not abstain on
taken from another's (DIR_B, e.g. step 42's hz_K), from score.sh's
per-question files (abstention off, same questions in the same order).
Prints, pooled over the folds, P R CR F1 tables over answerable questions
(an abstained question counts as nothing chosen), abstention and false
abstention, for each scorer alone and the two joined.

    python3 join44.py DIR_A DIR_B FLOOR COVERAGE"""
import json
import sys

da, db = sys.argv[1:3]
F, C = float(sys.argv[3]), float(sys.argv[4])
load = lambda f: [json.loads(l) for l in open(f)]


def abstains(q):
    return not q.get('selected') or q['best_logit'] < F or q['coverage'] < C


def row(pairs):
    """pairs: (answerable?, abstained?, q whose figures count)."""
    a = [(ab, q) for un, ab, q in pairs if not un]
    u = [ab for un, ab, q in pairs if un]
    n = len(a)
    m = [sum(0 if ab else q[k] for ab, q in a) / n for k in ('precision', 'recall', 'complete', 'f1')]
    t = sum(0 if ab else len(q.get('chosen') or []) for ab, q in a) / n
    return '%.3f %.3f %.3f %.3f %.2f  abstain %.3f  false %.4f' % (*m, t, sum(u) / len(u), sum(ab for ab, _ in a) / n)


for w in ('sp', 'syn'):
    A, B = [], []
    for k in range(7):
        A += load(f'{da}/{w}_{k}.jsonl')
        B += load(f'{db}/{w}_{k}.jsonl')
    assert [q['question'] for q in A] == [q['question'] for q in B]
    print('%-3s A alone   %s' % (w, row([(qa['unanswerable'], abstains(qa), qa) for qa in A])))
    print('%-3s B alone   %s' % (w, row([(qb['unanswerable'], abstains(qb), qb) for qb in B])))
    print('%-3s A decides %s' % (w, row([(qa['unanswerable'], abstains(qa), qb) for qa, qb in zip(A, B)])))
