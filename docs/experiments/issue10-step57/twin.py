import json,re,collections,sys
# usage: python3 twin.py FOLDDIR/s23/PREFIX (score.sh's per-question files)
d=sys.argv[1]
cat=collections.Counter(); ex=collections.defaultdict(list)
tot=collections.Counter()
def words(s): return re.findall(r"[a-z0-9]+", s.lower())
for k in range(7):
    sp=[json.loads(l) for l in open(f'{d}/sp_{k}.jsonl')]
    sy=[json.loads(l) for l in open(f'{d}/syn_{k}.jsonl')]
    sp=[r for r in sp if not r['unanswerable']]; sy=[r for r in sy if not r['unanswerable']]
    assert len(sp)==len(sy)
    for a,b in zip(sp,sy):
        tot['all']+=1
        tot[('sp',a['complete'])]+=1; tot[('syn',b['complete'])]+=1
        if a['complete'] and not b['complete']:
            wa,wb=set(words(a['question'])),set(words(b['question']))
            new=wb-wa
            rw=b.get('rewrites') or []
            rwfrom={x.split('→')[0] for x in rw}
            unbr=[w for w in new if w not in rwfrom]
            gold=set(b['gold']); ch=set(b['chosen'])
            golddb=b['db']
            other=any(not c.startswith(golddb+'.') for c in b['chosen'])
            only_other= ch and all(not c.startswith(golddb+'.') for c in ch)
            if not new: c='same words'
            elif not unbr: c='all new words rewritten'
            elif len(unbr)<len(new): c='some rewritten'
            else: c='none rewritten'
            c2 = 'only other db' if only_other else ('mixed' if other else 'gold db only')
            cat[(c,c2)]+=1
            if len(ex[(c,c2)])<6: ex[(c,c2)].append((a['question'][:70],b['question'][:70],rw,sorted(gold),sorted(ch)[:3]))
print(tot)
for k,v in sorted(cat.items(), key=lambda x:-x[1]): print(v,k)
for k,v in ex.items():
    print('==',k)
    for e in v: print('  ',e)
