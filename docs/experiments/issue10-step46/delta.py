#!/usr/bin/env python3
"""Step 46 of docs/retrieval.md: the paired difference B - A in complete
recall and F1 over the answerable questions of per-question files
(atrium eval --per-question) of the same questions, with 90% intervals
from 10,000 bootstrap resamples of questions and of databases (each
database with all its questions), overall and by the number of gold
tables (1, 2, 3 or more). Pairs of files are pooled.

    python3 delta.py [--floors F C [--join]] [--mix P1,P2,P3] A.jsonl B.jsonl [A2 B2 ...]

--floors applies the abstention floors offline, for files written with
abstention off (score.sh): an abstained question counts as nothing
chosen. --join takes B's abstention from A (step 44's design). --mix
also prints the difference with the gold-table buckets weighted to the
shares P1, P2, P3 (for example dev's)."""
import json
import random
import sys

args = sys.argv[1:]
floors, join, mix = None, False, None
while args and args[0].startswith('--'):
    o = args.pop(0)
    if o == '--floors':
        floors = (float(args.pop(0)), float(args.pop(0)))
    elif o == '--join':
        join = True
    elif o == '--mix':
        mix = [float(x) for x in args.pop(0).split(',')]
    else:
        sys.exit(__doc__)
if len(args) < 2 or len(args) % 2 or (join and not floors):
    sys.exit(__doc__)
load = lambda f: [json.loads(l) for l in open(f)]


def abstains(q):
    F, C = floors
    return not q.get('selected') or q['best_logit'] < F or q['coverage'] < C


def figures(q, abstained):
    return (0, 0.0) if abstained else (int(q['complete']), q['f1'])


diffs = []  # (db, bucket, d_complete, d_f1)
for fa, fb in zip(args[::2], args[1::2]):
    a, b = load(fa), load(fb)
    if len(a) != len(b):
        sys.exit(f'{fa} and {fb} differ in length')
    for qa, qb in zip(a, b):
        if qa['index'] != qb['index'] or qa['question'] != qb['question']:
            sys.exit(f'{fa} and {fb} are not the same questions')
        if qa['unanswerable']:
            continue
        ab_a = floors is not None and abstains(qa)
        ab_b = floors is not None and (ab_a if join else abstains(qb))
        ca, fa1 = figures(qa, ab_a)
        cb, fb1 = figures(qb, ab_b)
        diffs.append((f"{fa}:{qa['db']}", min(len(qa['gold']), 3), cb - ca, fb1 - fa1))

rng = random.Random(46)
mean = lambda xs, i: sum(x[i] for x in xs) / len(xs)


def report(name, ds):
    n = len(ds)
    bydb = {}
    for d in ds:
        bydb.setdefault(d[0], []).append(d)
    dbs = list(bydb)

    def interval(draw):
        cr, f1 = [], []
        for _ in range(10000):
            s = draw()
            cr.append(mean(s, 2))
            f1.append(mean(s, 3))
        cr.sort()
        f1.sort()
        return (cr[499], cr[9499]), (f1[499], f1[9499])

    q = interval(lambda: [ds[rng.randrange(n)] for _ in range(n)])
    d = interval(lambda: [x for _ in dbs for x in bydb[dbs[rng.randrange(len(dbs))]]])
    up = sum(1 for x in ds if x[2] > 0)
    down = sum(1 for x in ds if x[2] < 0)
    print(f'{name}: {n} answerable questions, {len(dbs)} databases; complete: {up} gained, {down} lost')
    print(f'  complete recall  {mean(ds, 2):+.4f}  90%: questions [{q[0][0]:+.4f}, {q[0][1]:+.4f}]'
          f'  databases [{d[0][0]:+.4f}, {d[0][1]:+.4f}]')
    print(f'  F1               {mean(ds, 3):+.4f}  90%: questions [{q[1][0]:+.4f}, {q[1][1]:+.4f}]'
          f'  databases [{d[1][0]:+.4f}, {d[1][1]:+.4f}]')
    return bydb


bydb = report('all', diffs)
share = []
for g in (1, 2, 3):
    ds = [x for x in diffs if x[1] == g]
    share.append(len(ds) / len(diffs))
    if ds:
        print(f'  gold {g}{"+" if g == 3 else " "} share {len(ds) / len(diffs):.3f}  complete recall {mean(ds, 2):+.4f}'
              f'  ({sum(x[2] > 0 for x in ds)} gained, {sum(x[2] < 0 for x in ds)} lost)  F1 {mean(ds, 3):+.4f}')
multi = [x for x in diffs if x[1] >= 2]
if multi:
    print(f'  gold 2+ share {len(multi) / len(diffs):.3f}  complete recall {mean(multi, 2):+.4f}'
          f'  ({sum(x[2] > 0 for x in multi)} gained, {sum(x[2] < 0 for x in multi)} lost)  F1 {mean(multi, 3):+.4f}')
if mix:
    by = [[x for x in diffs if x[1] == g] for g in (1, 2, 3)]
    cr = sum(p * mean(ds, 2) for p, ds in zip(mix, by) if ds)
    f1 = sum(p * mean(ds, 3) for p, ds in zip(mix, by) if ds)
    print(f'  weighted to gold shares {mix}: complete recall {cr:+.4f}, F1 {f1:+.4f}')
worst = sorted(bydb, key=lambda k: sum(x[2] for x in bydb[k]))[:5]
print('  most complete recall lost by database: ' +
      ', '.join(f'{k.split(":")[-1]} {sum(x[2] for x in bydb[k]):+d}/{len(bydb[k])}' for k in worst))
