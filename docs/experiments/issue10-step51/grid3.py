# Step 51 of docs/retrieval.md: abstention grid with a separate floor FB for
# questions whose coverage is only through vocabulary bridges (step 50 files).
# DIR_A holds score.sh's per-question files of the shipped rule (z), DIR_B
# those of step 50's rule (e50), which marks such questions by coverage 0.
#
#   python3 grid3.py DIR_A DIR_B      (e.g. /tmp/folds/s23/z /tmp/folds/s23/e50)
import json
import sys

da, db = sys.argv[1:3]
def load(d, w, k): return [json.loads(l) for l in open(f'{d}/{w}_{k}.jsonl')]
Q = {}
for w in ('sp', 'syn'):
    rows = []
    for k in range(7):
        for a, b in zip(load(da, w, k), load(db, w, k)):
            assert a['question'] == b['question']
            bridged = b['coverage'] == 0 and a['coverage'] > 0
            rows.append((a['unanswerable'], bool(a.get('selected')), a['best_logit'] if a.get('selected') else -99, a['coverage'], bridged))
    Q[w] = rows
def ev(F, C, FB):
    out = []
    for w in ('sp', 'syn'):
        na = nu = fa = ab = 0
        for un, sel, bl, cov, br in Q[w]:
            x = (not sel) or bl < F or cov < C or (br and bl < FB)
            if un: nu += 1; ab += x
            else: na += 1; fa += x
        out.append((ab / nu, fa / na))
    return out
fl = [x / 8 for x in range(-16, 9)]
covs = [0, .05, .1, .125, .15, .175, .2, .23, .25, .3]
for bound in (.025, .030):
    best = None
    for F in fl:
        for C in covs:
            for FB in [f for f in fl if f >= F]:
                (a1, f1), (a2, f2) = ev(F, C, FB)
                if f1 <= bound and f2 <= bound:
                    m = (a1 + a2) / 2
                    if best is None or m > best[0] + 1e-12:
                        best = (m, F, C, FB, a1, a2, f1, f2)
    print('bound', bound, 'best mean %.4f F %.3f C %.3f FB %.3f abst %.4f/%.4f false %.4f/%.4f' % best)
    # HEAD-only (FB == F)
    bh = None
    for F in fl:
        for C in covs:
            (a1, f1), (a2, f2) = ev(F, C, F)
            if f1 <= bound and f2 <= bound:
                m = (a1 + a2) / 2
                if bh is None or m > bh[0] + 1e-12: bh = (m, F, C, a1, a2, f1, f2)
    print('   HEAD grid: mean %.4f F %.3f C %.3f abst %.4f/%.4f false %.4f/%.4f' % bh)
