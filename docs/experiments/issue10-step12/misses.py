"""The miss breakdown of docs/retrieval.md ("Diagnostics") from a
per-question file of `atrium eval --per-question FILE`: lost gold tables by
reason, incomplete questions by the earliest stage that lost one of their
tables, the below-threshold margins and hybrid ranks, and how many
incomplete questions the scorer ranked a table of another
database first.

    python3 docs/experiments/issue10-step12/misses.py NAME FILE
"""
import collections
import json
import sys

ORDER = ['not_candidate', 'below_threshold', 'abstained', 'dropped_by_expansion']
name, path = sys.argv[1], sys.argv[2]
qs = [q for q in map(json.loads, open(path)) if not q.get('unanswerable')]
gold = sum(len(q['gold']) for q in qs)
tables, questions = collections.Counter(), collections.Counter()
margins, ranks = collections.Counter(), collections.Counter()
incomplete = other_first = 0
for q in qs:
    lost = q.get('lost') or []
    if not lost:
        continue
    incomplete += 1
    for l in lost:
        tables[l['reason']] += 1
        if l['reason'] == 'below_threshold':
            m = -l.get('margin', 0)
            margins['within 0.5' if m <= 0.5 else 'within 0.5–1' if m <= 1 else 'within 1–2' if m <= 2 else 'beyond 2'] += 1
            r = l.get('rank') or 99
            ranks['in 1–3' if r <= 3 else 'in 4–10' if r <= 10 else 'below 10'] += 1
    questions[min((l['reason'] for l in lost), key=ORDER.index)] += 1
    top = min(q['candidates'], key=lambda c: c.get('atr_rank', float('inf')), default=None)
    if top and top['table'].split('.')[0] != q['db'].lower():
        other_first += 1
nlost = sum(tables.values())
print(f'{name}: {len(qs):,} questions, {incomplete} incomplete ({incomplete / len(qs):.1%}), {nlost} of {gold:,} gold tables lost')
for r in ORDER:
    t, n = tables[r], questions[r]
    print(f'  {r:<20} {t:>3} tables ({t / max(nlost, 1):.1%})  {n:>3} questions ({n / max(incomplete, 1):.1%})')
print('  below-threshold margins: ' + ', '.join(f'{margins[k]} {k}' for k in ('within 0.5', 'within 0.5–1', 'within 1–2', 'beyond 2')) + ';')
print('  hybrid rank of those: ' + ', '.join(f'{ranks[k]} {k}' for k in ('in 1–3', 'in 4–10', 'below 10')))
print(f'  {other_first} of the {incomplete} incomplete questions ({other_first / max(incomplete, 1):.0%}) ranked a table of another database first')
