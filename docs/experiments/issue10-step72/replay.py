"""Step 72: replay abstention rules over per-question files written with
abstention off (pq.sh) and pick the operating point by criteria.txt."""
import itertools, json, sys

d = sys.argv[1]
def load(pre, s):
    out = []
    for k in range(7):
        out += [json.loads(l) for l in open(f'{d}/{pre}_{s}_{k}.jsonl')]
    return out
sets = {(pre, s): load(pre, s) for pre in ('ho', 'ren') for s in ('sp', 'syn')}

def abstains(r, floor, cov, x):
    if not r['selected'] or r['best_logit'] is None:
        return True
    return r['best_logit'] < floor or r['coverage'] < cov or (r['coverage'] < x and not r['named'])

def rates(rows, p):
    ans = [r for r in rows if not r['unanswerable']]
    un = [r for r in rows if r['unanswerable']]
    fa = sum(abstains(r, *p) for r in ans) / max(len(ans), 1)
    ab = sum(abstains(r, *p) for r in un) / max(len(un), 1) if un else float('nan')
    return fa, ab

def point(p):
    fa_sp, ab_sp = rates(sets['ho', 'sp'], p)
    fa_syn, ab_syn = rates(sets['ho', 'syn'], p)
    rfa_sp, _ = rates(sets['ren', 'sp'], p)
    rfa_syn, _ = rates(sets['ren', 'syn'], p)
    return dict(p=p, fa=(fa_sp, fa_syn), ab=(ab_sp, ab_syn), mean=(ab_sp + ab_syn) / 2, ren=(rfa_sp, rfa_syn))

def show(tag, q):
    print(f"{tag}: floor {q['p'][0]:.2f} cov {q['p'][1]:.2f} X {q['p'][2]:.2f} | abstain {q['ab'][0]:.3f} / {q['ab'][1]:.3f} mean {q['mean']:.3f}"
          f" | false {q['fa'][0]:.4f} / {q['fa'][1]:.4f} | ren false {q['ren'][0]:.4f} / {q['ren'][1]:.4f}")

for (pre, s), rows in sets.items():
    print(pre, s, 'n', len(rows), 'unanswerable', sum(r['unanswerable'] for r in rows))
shipped = point((-1.5, 0.20, 0.0))
show('shipped', shipped)
grid = list(itertools.product((-1.5, -1.75, -2.0, -2.25), (0.10, 0.15, 0.20), (0.0, 0.34, 0.5, 0.67)))
pts = [point(p) for p in grid]
for q in pts:
    show('  grid', q)
ok = [q for q in pts if q['fa'][0] <= shipped['fa'][0] + 1e-12 and q['fa'][1] <= shipped['fa'][1] + 1e-12]
best = max(ok, key=lambda q: (round(q['mean'], 6), q['p'][0] == -1.5 and q['p'][1] == 0.20, -q['p'][2]))
show('chosen', best)
