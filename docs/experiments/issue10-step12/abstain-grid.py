"""Replays abstention rules on per-question files written with abstention
off (abstain-signals.sh): abstain when the best selected logit < F, or
coverage < C, or the best selected table's member spread > X (in the
patched binaries the records' best_cosine field carries the spread).
Prints, per X, the best (F, C) by step 11's rule, and the rule's pick."""
import json, sys

d = sys.argv[1]
load = lambda f: [json.loads(l) for l in open(f)]
train = {w: load(f'{d}/{w}_train.jsonl') for w in ('sp', 'syn')}
held = {w: sum((load(f'{d}/{w}_{k}.jsonl') for k in range(7)), []) for w in ('sp', 'syn')}


def abstains(q, F, C, X):
    return not q.get('selected') or q['best_logit'] < F or q['coverage'] < C or q['best_cosine'] > X


def stats(F, C, X):
    out = {}
    for w in ('sp', 'syn'):
        h = held[w]
        fa = f1 = cr = 0
        for q in h:
            if abstains(q, F, C, X):
                fa += 1
            else:
                f1 += q['f1']; cr += q['complete']
        u = [q for q in train[w] if q['unanswerable']]
        out[w] = (fa / len(h), f1 / len(h), cr / len(h), sum(abstains(q, F, C, X) for q in u) / len(u))
    return out


best = None
for X in (0.6, 0.8, 1.0, 1.5, float('inf')):
    bx = None
    for F in (-1.5, -1.25, -1.0, -0.75, -0.5):
        for C in (0, 0.1, 0.15, 0.2, 0.25, 0.3):
            o = stats(F, C, X)
            if max(o['sp'][0], o['syn'][0]) > 0.03:
                continue
            ab = (o['sp'][3] + o['syn'][3]) / 2
            if bx is None or ab > bx[0]:
                bx = (ab, F, C, o)
    if bx is None:
        continue
    ab, F, C, o = bx
    print('spread > %-4s floor %5.2f cov %.2f | held-out Spider F1 %.3f CR %.3f false %.3f | Syn F1 %.3f CR %.3f false %.3f | train abstain %.3f / %.3f'
          % (X, F, C, o['sp'][1], o['sp'][2], o['sp'][0], o['syn'][1], o['syn'][2], o['syn'][0], o['sp'][3], o['syn'][3]))
    if best is None or ab > best[0]:
        best = (ab, X, F, C)
print('rule picks: spread > %s, floor %.2f, coverage %.2f (mean training abstention %.3f)' % (best[1], best[2], best[3], best[0]))
