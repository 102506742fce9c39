# usage: python3 frontier.py DIR_A DIR_B (score.sh's per-question files): each side's
# selection cut at shifted margins, abstention and expansion left out.
import json,sys,glob
def load(d,w):
    out=[]
    for k in range(7):
        for l in open(f'{d}/{w}_{k}.jsonl'):
            r=json.loads(l)
            if r['unanswerable']: continue
            out.append((set(r['gold']),[(c['table'],c.get('margin',-99)) for c in r['candidates'] if 'margin' in c]))
    return out
def at(qs,delta):
    P=R=CR=F=T=0
    for gold,cs in qs:
        ch={t for t,m in cs if m>delta}
        tp=len(ch&gold)
        p=tp/len(ch) if ch else 0; r=tp/len(gold)
        P+=p;R+=r;CR+=(tp==len(gold));F+=(2*p*r/(p+r) if p+r else 0);T+=len(ch)
    n=len(qs);return P/n,R/n,CR/n,F/n,T/n
for w in ('sp','syn'):
    A=load(sys.argv[1],w);B=load(sys.argv[2],w)
    print(w)
    for d in [x/8 for x in range(-8,17)]:
        a=at(A,d);b=at(B,d)
        print(f'  d {d:+.3f}  A tables {a[4]:.2f} CR {a[2]:.4f} F1 {a[3]:.4f}   B tables {b[4]:.2f} CR {b[2]:.4f} F1 {b[3]:.4f}')
