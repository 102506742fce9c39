#!/usr/bin/env python3
"""Step 23 of docs/retrieval.md: from score.sh's per-question files (folds'
held-out questions plus their unanswerable sets, abstention off), pooled
over the folds given:

 (a) answerable P R CR F1 tables with abstention off (ATR's own empty
     selections count as chosen nothing), and ATR's own abstention;
 (b) the (floor, coverage) pair of most mean abstention on the unanswerable
     sets (Spider, Spider-Syn wording) whose false abstention is at most
     0.02, 0.025 (step 26), 0.03 and 0.05 in both wordings; floors -6 .. 0 in
     eighths, coverage 0 and 0.10 .. 0.34 (and 0.05, for the curve).

    python3 grid.py DIR [K...]"""
import json
import sys

d = sys.argv[1]
ks = [int(k) for k in sys.argv[2:]] or list(range(7))
load = lambda f: [json.loads(l) for l in open(f)]
rows = {w: sum((load(f'{d}/{w}_{k}.jsonl') for k in ks), []) for w in ('sp', 'syn')}
ans = {w: [q for q in rows[w] if not q['unanswerable']] for w in rows}
un = {w: [q for q in rows[w] if q['unanswerable']] for w in rows}


def abstains(q, F, C):
    return not q.get('selected') or q['best_logit'] < F or q['coverage'] < C


for w in ('sp', 'syn'):
    a = ans[w]
    n = len(a)
    m = [sum(q[k] for q in a) / n for k in ('precision', 'recall', 'complete', 'f1')]
    t = sum(len(q.get('chosen') or []) for q in a) / n
    print('%-3s n=%d  P R CR F1 tables %.3f %.3f %.3f %.3f %.2f | ATR alone: abstain %.3f false %.3f (unanswerable n=%d)'
          % (w, n, *m, t, sum(not q.get('selected') for q in un[w]) / len(un[w]),
             sum(not q.get('selected') for q in a) / n, len(un[w])))

floors = [float("-inf")] + [x / 8 for x in range(-48, 1)]
covs = (0.0, 0.1, 0.125, 0.15, 0.175, 0.2, 0.21, 0.22, 0.23, 0.24, 0.25, 0.26, 0.28, 0.3, 0.34)
grid = []
for F in floors:
    for C in covs:
        fa = {w: sum(abstains(q, F, C) for q in ans[w]) / len(ans[w]) for w in ans}
        ab = {w: sum(abstains(q, F, C) for q in un[w]) / len(un[w]) for w in un}
        grid.append((F, C, fa, ab))
for bound in (0.02, 0.025, 0.03, 0.05):
    ok = [g for g in grid if max(g[2].values()) <= bound]
    if not ok:
        print('false <= %.3f: no point' % bound)
        continue
    F, C, fa, ab = max(ok, key=lambda g: ((g[3]['sp'] + g[3]['syn']) / 2, g[0]))
    print('false <= %.3f: floor %6.3f cov %.3f | abstain %.3f / %.3f mean %.3f | false %.3f / %.3f'
          % (bound, F, C, ab['sp'], ab['syn'], (ab['sp'] + ab['syn']) / 2, fa['sp'], fa['syn']))
F, C = -1.5, 0.2
fa = {w: sum(abstains(q, F, C) for q in ans[w]) / len(ans[w]) for w in ans}
ab = {w: sum(abstains(q, F, C) for q in un[w]) / len(un[w]) for w in un}
print('shipped floors -1.500 / 0.20: abstain %.3f / %.3f mean %.3f | false %.3f / %.3f'
      % (ab['sp'], ab['syn'], (ab['sp'] + ab['syn']) / 2, fa['sp'], fa['syn']))
