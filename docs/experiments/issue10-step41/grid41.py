#!/usr/bin/env python3
"""Step 41 of docs/retrieval.md: step 26's floor policy with a per-fold
clause. From score.sh's per-question files (issue10-step23), the (floor,
coverage) pair of most mean abstention on the folds' unanswerable sets
(Spider, Spider-Syn wording) such that, in both wordings, pooled held-out
false abstention is at most 0.025 and no more than one of the folds is
over 0.03. Floors -inf and -6 .. 0 in sixteenths; coverage 0 and
0.05 .. 0.34 in hundredths. Also prints the point step 26's policy alone
gives on the same grid, and each point's per-fold false abstention.

    python3 grid41.py DIR [K...]"""
import json
import sys

d = sys.argv[1]
ks = [int(k) for k in sys.argv[2:]] or list(range(7))
load = lambda f: [json.loads(l) for l in open(f)]
words = ('sp', 'syn')
folds = {(w, k): load(f'{d}/{w}_{k}.jsonl') for w in words for k in ks}


def abstains(q, F, C):
    return not q.get('selected') or q['best_logit'] < F or q['coverage'] < C


# Per fold and wording: (best_logit, coverage, selected) of the answerable
# and unanswerable questions, so that the grid is a few array passes.
ans = {key: [q for q in rows if not q['unanswerable']] for key, rows in folds.items()}
un = {key: [q for q in rows if q['unanswerable']] for key, rows in folds.items()}

floors = [float('-inf')] + [x / 16 for x in range(-96, 1)]
covs = [0.0] + [c / 100 for c in range(5, 35)]
grid = []
for F in floors:
    for C in covs:
        fa = {key: sum(abstains(q, F, C) for q in qs) for key, qs in ans.items()}
        ab = {key: sum(abstains(q, F, C) for q in qs) for key, qs in un.items()}
        pooled_fa = {w: sum(fa[(w, k)] for k in ks) / sum(len(ans[(w, k)]) for k in ks) for w in words}
        pooled_ab = {w: sum(ab[(w, k)] for k in ks) / sum(len(un[(w, k)]) for k in ks) for w in words}
        per_fold = {w: [fa[(w, k)] / len(ans[(w, k)]) for k in ks] for w in words}
        grid.append((F, C, pooled_fa, pooled_ab, per_fold))


def show(name, ok):
    if not ok:
        print(f'{name}: no point')
        return
    F, C, fa, ab, pf = max(ok, key=lambda g: ((g[3]['sp'] + g[3]['syn']) / 2, g[0]))
    print('%s: floor %7.4f cov %.2f | abstain %.3f / %.3f mean %.3f | false %.3f / %.3f'
          % (name, F, C, ab['sp'], ab['syn'], (ab['sp'] + ab['syn']) / 2, fa['sp'], fa['syn']))
    for w in words:
        print('    %-3s false per fold %s' % (w, ' '.join('%.3f' % x for x in pf[w])))


show('step 26 (pooled <= .025)', [g for g in grid if max(g[2].values()) <= 0.025])
show('step 41 (and at most one fold > .03)',
     [g for g in grid if max(g[2].values()) <= 0.025 and all(sum(x > 0.03 for x in g[4][w]) <= 1 for w in words)])
