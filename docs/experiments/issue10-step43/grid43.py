#!/usr/bin/env python3
"""Step 43 of docs/retrieval.md: step 42's per-question files with the
abstention floor read on prior-free logits (the best selected table's
logit minus LAMBDA (s - pair_mean[0]) of its fold's weights), then
grid.py's grid and step 26's policy (pooled held-out false abstention at
most 0.025 in both wordings).

    python3 grid43.py DIR FOLDDIR [LAMBDA]"""
import json
import sys

d, fx = sys.argv[1:3]
lam = float(sys.argv[3]) if len(sys.argv) > 3 else 2.0
ks = range(7)
words = ('sp', 'syn')
ans = {w: [] for w in words}
un = {w: [] for w in words}
for k in ks:
    means = {m['pair_mean'][0] for m in json.load(open(f'{fx}/z_{k}.json'))['members']}
    assert len(means) == 1, means
    mean = means.pop()
    for w in words:
        for line in open(f'{d}/{w}_{k}.jsonl'):
            q = json.loads(line)
            sel = [c for c in q['candidates'] if c.get('selected')]
            best = max((c['logit'] - lam * (c['score'] - mean) for c in sel), default=float('-inf'))
            row = (bool(q.get('selected')) and bool(sel), best, q['coverage'])
            (un if q['unanswerable'] else ans)[w].append(row)


def abstains(r, F, C):
    return not r[0] or r[1] < F or r[2] < C


floors = [float('-inf')] + [x / 8 for x in range(-48, 1)]
covs = (0.0, 0.1, 0.125, 0.15, 0.175, 0.2, 0.21, 0.22, 0.23, 0.24, 0.25, 0.26, 0.28, 0.3, 0.34)
best = None
for F in floors:
    for C in covs:
        fa = {w: sum(abstains(r, F, C) for r in ans[w]) / len(ans[w]) for w in words}
        ab = {w: sum(abstains(r, F, C) for r in un[w]) / len(un[w]) for w in words}
        if max(fa.values()) > 0.025:
            continue
        key = ((ab['sp'] + ab['syn']) / 2, F)
        if best is None or key > best[0]:
            best = (key, F, C, fa, ab)
(_, F, C, fa, ab) = best
print('false <= 0.025: floor %6.3f cov %.3f | abstain %.3f / %.3f mean %.3f | false %.3f / %.3f'
      % (F, C, ab['sp'], ab['syn'], (ab['sp'] + ab['syn']) / 2, fa['sp'], fa['syn']))
