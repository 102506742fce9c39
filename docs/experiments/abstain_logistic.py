#!/usr/bin/env python3
"""Issue 10, step 9 (docs/retrieval.md): a logistic combination of the
abstention signals, fitted on the training-derived unanswerable sets. Not
kept. Pure Python (no numpy on the machine), about 40 s.

Per-question files from runs with abstention off:

  bin/atrium eval --bench ../shared/bench/spider     --questions $PWD/retriever/evaluate/unanswerable/train.json     --abstain-floor=-inf --abstain-coverage=0 --per-question train.pq
  bin/atrium eval --bench ../shared/bench/spider-syn --questions $PWD/retriever/evaluate/unanswerable/train_syn.json --abstain-floor=-inf --abstain-coverage=0 --per-question train_syn.pq
  (and the same with --unanswerable retriever/evaluate/unanswerable/dev.json on the dev sets, for dev.pq / dev_syn.pq)

  python3 docs/experiments/abstain_logistic.py train.pq train_syn.pq dev.pq dev_syn.pq

The cut is chosen on the two training files (most abstention with false
abstention at most B on each); the dev files are only reported.
"""
import json, math, sys


def feats(r):
    c = r['candidates']
    bl = r['best_logit']
    if bl is None or (isinstance(bl, float) and math.isinf(bl)) or not r.get('selected'):
        return None  # Algorithm 1 chose nothing: always abstains
    lg = sorted([x['logit'] for x in c], reverse=True)
    top = sorted(c, key=lambda x: -x['logit'])[:5]
    return [bl, r['coverage'], r['best_cosine'], r['max_cosine'], r['threshold'],
            len(r['selected']), lg[0] - (lg[1] if len(lg) > 1 else lg[0] - 5),
            max(x['score'] for x in c), len({x['table'].split('.')[0] for x in top}),
            bl - r['threshold']]


def load(path):
    X, Y = [], []
    for line in open(path):
        r = json.loads(line)
        X.append(feats(r))
        Y.append(1 if r['unanswerable'] else 0)
    return X, Y


tr = [load(sys.argv[1]), load(sys.argv[2])]
dv = [load(sys.argv[3]), load(sys.argv[4])]
XX = [x for X, _ in tr for x in X if x is not None]
YY = [y for X, Y in tr for x, y in zip(X, Y) if x is not None]
d = len(XX[0])
mu = [sum(x[j] for x in XX) / len(XX) for j in range(d)]
sd = [max(1e-6, math.sqrt(sum((x[j] - mu[j]) ** 2 for x in XX) / len(XX))) for j in range(d)]
Z = [[(x[j] - mu[j]) / sd[j] for j in range(d)] for x in XX]
w, b = [0.0] * d, 0.0
for _ in range(300):  # batch gradient descent, L2 1e-3
    gw, gb = [0.0] * d, 0.0
    for z, y in zip(Z, YY):
        e = 1 / (1 + math.exp(-(sum(wi * zi for wi, zi in zip(w, z)) + b))) - y
        for j in range(d):
            gw[j] += e * z[j]
        gb += e
    w = [wi - 0.5 * (g / len(Z) + 1e-3 * wi) for wi, g in zip(w, gw)]
    b -= 0.5 * gb / len(Z)


def score(x):
    if x is None:
        return 1e9
    return sum(wi * (v - mu[j]) / sd[j] for j, (wi, v) in enumerate(zip(w, x))) + b


def rates(S, cut):
    X, Y = S
    ab = [score(x) >= cut for x in X]
    u = sum(1 for a, y in zip(ab, Y) if y and a) / sum(Y)
    f = sum(1 for a, y in zip(ab, Y) if not y and a) / (len(Y) - sum(Y))
    return round(u, 3), round(f, 3)


cuts = sorted({score(x) for X, _ in tr for x in X if x is not None})
for B in (0.01, 0.02, 0.03):
    cut = next(c for c in cuts if all(rates(S, c)[1] <= B for S in tr))
    print(f"false_abstain <= {B} on train: (abstain, false_abstain) train {[rates(S, cut) for S in tr]} dev {[rates(S, cut) for S in dv]}")
