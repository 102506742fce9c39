"""Selection rules of docs/retrieval.md, step 12, replayed on the seven
folds' per-question files (the shipped pipeline's own selection, then each
rule applied to it), P R CR F1 tables pooled over the held-out questions:

  (a) keep only the database of the best selected table, and tables of
      other databases within M logits of the best;
  (b) the same with the database holding the most exp(logit) mass;
  (c) a looser cut: candidates within delta of their window's threshold
      join the selection, for every question or only below a coverage;
  and the selection without expansion.

Per-question files: for k in 0..6, `strict-k eval --bench ho_W_k
--atr-weights docs/experiments/issue10-step11/ens4_k.json --per-question
DIR/W_k.jsonl` for W in sp, syn (the folds of docs/experiments/cv-prep.sh).

    python3 docs/experiments/issue10-step12/replay.py DIR
"""
import collections
import json
import math
import sys

d = sys.argv[1]


def load(w):
    return [q for k in range(7) for q in map(json.loads, open(f'{d}/{w}_{k}.jsonl')) if not q.get('unanswerable')]


def db(t):
    return t.split('.')[0]


def one_database(q, m, mass):
    chosen = q.get('chosen') or []
    sel = q.get('selected') or []
    if not chosen or not sel:
        return set(chosen)
    logit = {c['table']: c.get('logit', -99) for c in q['candidates']}
    best = max(logit.get(t, -99) for t in sel)
    if mass:
        w = collections.defaultdict(float)
        for c in q['candidates']:
            w[db(c['table'])] += math.exp(c.get('logit', -99))
        keep = max(w, key=w.get)
    else:
        keep = db(max(sel, key=lambda t: logit.get(t, -99)))
    return {t for t in chosen if db(t) == keep or logit.get(t, -99) >= best - m}


def looser(q, delta, below):
    chosen = set(q.get('chosen') or [])
    if not chosen or q.get('abstained') or q['coverage'] >= below:
        return chosen
    return chosen | {c['table'] for c in q['candidates'] if not c.get('selected') and c.get('margin', -99) >= -delta}


def no_expansion(q):
    return set(q.get('chosen') or []) & set(q.get('selected') or [])


def score(qs, rule):
    tot = [0.0] * 5
    for q in qs:
        s, gold = rule(q), set(q['gold'])
        tp = len(s & gold)
        p, r = (tp / len(s) if s else 0), tp / len(gold)
        for i, v in enumerate((p, r, tp == len(gold), 2 * p * r / (p + r) if p + r else 0, len(s))):
            tot[i] += v
    return ' '.join('%.3f' % (v / len(qs)) for v in tot[:4]) + ' %.2f' % (tot[4] / len(qs))


rules = [
    ('shipped', lambda q: set(q.get('chosen') or [])),
    ('(a) one database, M = 0', lambda q: one_database(q, 0, False)),
    ('(a) M = 0.5', lambda q: one_database(q, 0.5, False)),
    ('(b) most mass, M = 0.5', lambda q: one_database(q, 0.5, True)),
    ('(c) coverage < 0.5, delta 0.5', lambda q: looser(q, 0.5, 0.5)),
    ('every question, delta 0.25', lambda q: looser(q, 0.25, 2)),
    ('no expansion', no_expansion),
]
qs = {w: load(w) for w in ('sp', 'syn')}
print('%-30s %-32s %s' % ('rule', 'Spider wording', 'Spider-Syn wording'))
for name, rule in rules:
    print('%-30s %-32s %s' % (name, score(qs['sp'], rule), score(qs['syn'], rule)))
