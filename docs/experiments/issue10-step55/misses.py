#!/usr/bin/env python3
"""Step 55 of docs/retrieval.md: why fold questions are incomplete, from
score.sh's per-question files (abstention off): each lost gold table's
stage (not a candidate; below the threshold, next to a chosen table by a
foreign key or not), then each incomplete question by what was chosen
(nothing; only other databases; its own database but no gold table;
part of the gold).

    python3 misses.py [PREFIX]   (reads /tmp/folds/ho_*/tables.json and /tmp/folds/s23/PREFIX)"""
import json,collections,sys
pre=sys.argv[1] if len(sys.argv)>1 else 'head'
for w in ('sp','syn'):
    fk={}  # table -> set of neighbours
    cat=collections.Counter(); n=0; inc=0
    gaps=[]
    adj=collections.Counter()
    for k in range(7):
        tj=json.load(open(f'/tmp/folds/ho_{w}_{k}/tables.json'))
        for db in tj:
            names=[f"{db['db_id']}.{t}".lower() for t in db['table_names_original']]
            for a,b in db['foreign_keys']:
                ta=names[db['column_names_original'][a][0]]; tb=names[db['column_names_original'][b][0]]
                fk.setdefault(ta,set()).add(tb); fk.setdefault(tb,set()).add(ta)
        for line in open(f'/tmp/folds/s23/{pre}/{w}_{k}.jsonl'):
            d=json.loads(line)
            if d['unanswerable']: continue
            n+=1
            if d['complete']: continue
            inc+=1
            cands={c['table'].lower():c for c in d['candidates']}
            chosen=set(t.lower() for t in d['chosen']); sel=set(t.lower() for t in d['selected'])
            for g in d['gold']:
                g=g.lower()
                if g in chosen: continue
                if g not in cands: cat['not candidate']+=1; continue
                c=cands[g]
                if g in sel: cat['selected, dropped']+=1; continue
                a = any(g in fk.get(t,()) for t in chosen)
                cat['below threshold'+(' fk-adjacent' if a else ' not adjacent')]+=1
                gaps.append(c['logit']-d['threshold'])
    print(w,'answerable',n,'incomplete',inc, dict(cat))
    gaps.sort()
    import statistics
    if gaps: print('  gap logit-threshold quantiles', [round(gaps[int(q*len(gaps))],2) for q in (0.1,0.25,0.5,0.75,0.9)])
for w in ('sp','syn'):
    c=collections.Counter()
    for k in range(7):
        for line in open(f'/tmp/folds/s23/{pre}/{w}_{k}.jsonl'):
            d=json.loads(line)
            if d['unanswerable'] or d['complete']: continue
            gold=set(g.lower() for g in d['gold']); ch=set(t.lower() for t in d['chosen'])
            db=d['db'].lower()
            chdbs=set(t.split('.')[0] for t in ch)
            if not ch: c['nothing chosen']+=1
            elif not (gold&ch):
                c['no gold chosen, '+('right db chosen' if db in chdbs else 'wrong db only')]+=1
            else:
                c['partial (%d gold, %d chosen)'%(len(gold), len(ch))]+=1
    print(w, sorted(c.items(), key=lambda x:-x[1])[:12])
