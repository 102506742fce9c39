"""Step 17 of docs/retrieval.md: paired bootstrap over databases (2,000
resamples) of the per-question F1 and complete-recall differences between
two per-question.sh directories, per wording.

    python3 docs/experiments/issue10-step17/bootstrap.py BEFORE AFTER"""
import json,sys,random,collections
a,b=sys.argv[1],sys.argv[2]
def load(d):
    out={}
    for s in ('sp','syn'):
        for k in range(7):
            for l in open(f'{d}/{s}_{k}.jsonl'):
                r=json.loads(l)
                if r['unanswerable']: continue
                g=set(r['gold']); c={x['table'] for x in r['candidates'] if x.get('chosen')}
                tp=len(g&c); p=tp/len(c) if c else 0; rc=tp/len(g) if g else 0
                f=2*p*rc/(p+rc) if p+rc else 0
                out[(s,k,r['index'])]=(r['db'],f,1.0 if g<=c else 0.0,len(c))
    return out
A,B=load(a),load(b)
for s in ('sp','syn'):
    bydb=collections.defaultdict(list)
    for key,v in A.items():
        if key[0]!=s: continue
        w=B[key]; bydb[v[0]].append((w[1]-v[1],w[2]-v[2]))
    dbs=list(bydb); n=sum(len(x) for x in bydb.values())
    df=sum(x[0] for l in bydb.values() for x in l)/n; dc=sum(x[1] for l in bydb.values() for x in l)/n
    random.seed(1); bf=[];bc=[]
    for _ in range(2000):
        smp=[random.choice(dbs) for _ in dbs]
        xs=[x for d in smp for x in bydb[d]]
        bf.append(sum(x[0] for x in xs)/len(xs)); bc.append(sum(x[1] for x in xs)/len(xs))
    bf.sort();bc.sort()
    print(f'{s}: n={n} dF1 {df:+.4f} [{bf[50]:+.4f},{bf[1949]:+.4f}]  dCR {dc:+.4f} [{bc[50]:+.4f},{bc[1949]:+.4f}]')
