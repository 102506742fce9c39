"""Step 20 of docs/retrieval.md: step 16's grid.py on step 19's extended grid
(floors -2 to -0.25 in eighths, coverage from 0.10), plus the shipped
point (-1.50 / 0.20) for reference. Step 12's abstention rule: from the
per-question files abstain.sh writes, the five (floor, coverage) pairs of
most mean training abstention whose pooled held-out false abstention is at
most 0.03 in both wordings.

    python3 docs/experiments/issue10-step20/grid.py DIR"""
import json
import sys

d = sys.argv[1]
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
for F in [x / 8 for x in range(-16, -1)]:
    for C in (0.1, 0.125, 0.15, 0.175, 0.2, 0.21, 0.22, 0.23, 0.24, 0.25, 0.26, 0.28, 0.3, 0.34):
        o = stats(F, C)
        if max(o['sp'][0], o['syn'][0]) <= 0.03:
            rows.append(((o['sp'][3] + o['syn'][3]) / 2, F, C, o))
rows.sort(key=lambda r: -r[0])
for ab, F, C, o in rows[:5]:
    print('floor %6.3f cov %.2f | held-out Spider F1 %.3f CR %.3f false %.3f | Syn F1 %.3f CR %.3f false %.3f | train abstain %.3f / %.3f, mean %.3f'
          % (F, C, o['sp'][1], o['sp'][2], o['sp'][0], o['syn'][1], o['syn'][2], o['syn'][0], o['sp'][3], o['syn'][3], ab))
o = stats(-1.5, 0.2)
print('shipped point -1.500 / 0.20: held-out false %.3f / %.3f, train abstain %.3f / %.3f, mean %.3f'
      % (o['sp'][0], o['syn'][0], o['sp'][3], o['syn'][3], (o['sp'][3] + o['syn'][3]) / 2))
