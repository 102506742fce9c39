"""Step 17 of docs/retrieval.md: how much of a string literal of the gold SQL
a Spider *training* question shares, for the literals it mentions at all
(a content word in common): the rule that a value shared in less than half
its words counts only when the question marks the shared word (quotes it,
or capitalises it inside the sentence, as retriever/features.go's
markedWords reads it) rests on these counts.

    python3 docs/experiments/issue10-step17/literals.py ../shared/bench/spider/train_spider.json
"""
import json
import re
import sys

STOP = {'the', 'of', 'for', 'and', 'a', 'an', 'in', 'on', 'to', 'at', 'by', 'with', 'or', 'is'}


def words(s):
    return [w.lower() for w in re.findall(r'[A-Za-z]+|\d+', s)]


def marked(q):
    m, quote, first = set(), '', True
    for tok in q.split():
        if not quote and tok[:1] in '\'"':
            quote = tok[0]
        w = tok.strip('\'"?!.,;:()')
        if w and (quote or (not first and w[:1].isupper())):
            m.update(words(w))
        if quote and quote in tok.lstrip(quote):
            quote = ''
        first = False
    return m


total = low = low_unmarked = 0
for q in json.load(open(sys.argv[1])):
    qw, mk = set(words(q['question'])), marked(q['question'])
    for a, b in re.findall(r"'([^']*)'|\"([^\"]*)\"", q['query']):
        ws = words(a or b)
        hits = [w for w in ws if w in qw]
        content = [w for w in hits if w not in STOP and not w.isdigit()]
        if not content:
            continue
        total += 1
        if len(hits) / len(ws) < 0.5:
            low += 1
            if not any(w in mk for w in content):
                low_unmarked += 1
                print('unmarked:', q['question'], '|', a or b)
print(f'{total} literals mentioned; {low} share less than half their words; {low_unmarked} of those unmarked')
