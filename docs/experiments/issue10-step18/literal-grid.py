"""Step 18 of docs/retrieval.md: the literal rule (literal-rule.patch) on
top of the floors, by step 12's rule: the most mean training abstention
whose pooled held-out false abstention is at most 0.03 in both wordings.
Abstention = best < F or coverage < C or (literal coverage < D and best < F2).

    git apply docs/experiments/issue10-step18/literal-rule.patch
    bash docs/experiments/issue10-step16/strict.sh FOLDDIR NAME
    bash docs/experiments/issue10-step16/abstain.sh FOLDDIR NAME bin/atrium
    python3 docs/experiments/issue10-step18/literal-grid.py FOLDDIR/NAME/pq

(The per-question files then carry `literal_coverage`.)"""
import json
import sys

d = sys.argv[1]
load = lambda f: [json.loads(l) for l in open(f)]
train = {w: load(f'{d}/{w}_train.jsonl') for w in ('sp', 'syn')}
held = {w: sum((load(f'{d}/{w}_{k}.jsonl') for k in range(7)), []) for w in ('sp', 'syn')}


def abst(q, F, C, D, F2):
    if not q.get('selected') or q['best_logit'] < F or q['coverage'] < C:
        return True
    return q['literal_coverage'] < D and q['best_logit'] < F2


def stats(F, C, D, F2):
    o = {}
    for w in ('sp', 'syn'):
        h = held[w]
        kept = [q for q in h if not abst(q, F, C, D, F2)]
        u = [q for q in train[w] if q['unanswerable']]
        o[w] = (1 - len(kept) / len(h), sum(q['f1'] for q in kept) / len(h),
                sum(q['complete'] for q in kept) / len(h), sum(abst(q, F, C, D, F2) for q in u) / len(u))
    return o


rows = []
for F in (-1.75, -1.5, -1.25, -1.0):
    for C in (0.15, 0.18, 0.2, 0.22, 0.25):
        for D in (0.0001, 0.1, 0.15, 0.2, 0.25, 0.34):
            for F2 in (-1.0, -0.75, -0.5, -0.25, 0.0, 0.5, 1.0, 99):
                o = stats(F, C, D, F2)
                if max(o['sp'][0], o['syn'][0]) <= 0.03:
                    rows.append(((o['sp'][3] + o['syn'][3]) / 2, F, C, D, F2, o))
rows.sort(key=lambda r: -r[0])
print('shipped (floor -1.50, coverage 0.20, no literal rule):', stats(-1.5, 0.2, 0, 99))
for ab, F, C, D, F2, o in rows[:8]:
    print('mean train abstain %.3f | F %.2f C %.2f D %.2f F2 %.2f | held-out false/F1/CR Spider %.4f %.3f %.3f, Syn %.4f %.3f %.3f | train abstain %.3f / %.3f'
          % (ab, F, C, D, F2, o['sp'][0], o['sp'][1], o['sp'][2], o['syn'][0], o['syn'][1], o['syn'][2], o['sp'][3], o['syn'][3]))
