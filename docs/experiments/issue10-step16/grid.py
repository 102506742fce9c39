"""Step 12's abstention rule on a finer grid (floors in eighths): from the
per-question files abstain.sh writes, the five (floor, coverage) pairs of
most mean training abstention whose pooled held-out false abstention is at
most 0.03 in both wordings.

    python3 docs/experiments/issue10-step16/grid.py [--extended] DIR

--extended tries step 19's wider grid (floors -2 to -0.25 in eighths,
coverage from 0.10) and also prints the shipped point (-1.50 / 0.20)."""
import json
import sys

extended = '--extended' in sys.argv[1:]
d = [a for a in sys.argv[1:] if a != '--extended'][0]
load = lambda f: [json.loads(l) for l in open(f)]
train = {w: load(f'{d}/{w}_train.jsonl') for w in ('sp', 'syn')}
held = {w: sum((load(f'{d}/{w}_{k}.jsonl') for k in range(7)), []) for w in ('sp', 'syn')}


def abstains(q, F, C):
    return not q.get('selected') or q['best_logit'] < F or q['coverage'] < C


def stats(F, C):
    out = {}
    for w in ('sp', 'syn'):
        h = held[w]
        fa = f1 = cr = 0
        for q in h:
            if abstains(q, F, C):
                fa += 1
            else:
                f1 += q['f1']
                cr += q['complete']
        u = [q for q in train[w] if q['unanswerable']]
        out[w] = (fa / len(h), f1 / len(h), cr / len(h), sum(abstains(q, F, C) for q in u) / len(u))
    return out


rows = []
floors = (-1.75, -1.5, -1.375, -1.25, -1.125, -1.0, -0.875, -0.75)
covs = (0.2, 0.21, 0.22, 0.23, 0.24, 0.25, 0.26, 0.28, 0.3, 0.34)
if extended:
    floors = [x / 8 for x in range(-16, -1)]
    covs = (0.1, 0.125, 0.15, 0.175) + covs
for F in floors:
    for C in covs:
        o = stats(F, C)
        if max(o['sp'][0], o['syn'][0]) <= 0.03:
            rows.append(((o['sp'][3] + o['syn'][3]) / 2, F, C, o))
rows.sort(key=lambda r: -r[0])
for ab, F, C, o in rows[:5]:
    print('floor %6.3f cov %.2f | held-out Spider F1 %.3f CR %.3f false %.3f | Syn F1 %.3f CR %.3f false %.3f | train abstain %.3f / %.3f, mean %.3f'
          % (F, C, o['sp'][1], o['sp'][2], o['sp'][0], o['syn'][1], o['syn'][2], o['syn'][0], o['sp'][3], o['syn'][3], ab))
if extended:
    o = stats(-1.5, 0.2)
    print('shipped point -1.500 / 0.20: held-out false %.3f / %.3f, train abstain %.3f / %.3f, mean %.3f'
          % (o['sp'][0], o['syn'][0], o['sp'][3], o['syn'][3], (o['sp'][3] + o['syn'][3]) / 2))
