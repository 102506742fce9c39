import json,sys,random
A,B=sys.argv[1],sys.argv[2]
def ab(r): 
    bl=r.get('best_logit'); 
    return bl is None or bl < -1.5 or (r.get('coverage') or 0) < 0.2
flips=[];back=[];fa=[]
for w in ('sp','syn'):
  for k in range(7):
    ra=[json.loads(l) for l in open(f'{A}/{w}_{k}.jsonl')]
    rb=[json.loads(l) for l in open(f'{B}/{w}_{k}.jsonl')]
    for a,b in zip(ra,rb):
        if a['unanswerable'] and ab(a) and not ab(b): flips.append((w,a['question'][:80],a.get('coverage'),b.get('coverage'),b['chosen'][:2]))
        if a['unanswerable'] and not ab(a) and ab(b): back.append(a['question'][:80])
        if not a['unanswerable'] and ab(a) and not ab(b): fa.append((w,a['question'][:80],a['gold'],b['chosen'][:3]))
print('unanswerable no longer abstained:',len(flips),' newly abstained:',len(back),' answerable rescued:',len(fa))
random.seed(1)
for x in random.sample(flips,min(25,len(flips))): print('  U',x)
for x in random.sample(fa,min(12,len(fa))): print('  A',x)
