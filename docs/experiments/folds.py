#!/usr/bin/env python3
"""The seven cross-validation folds of docs/retrieval.md (steps 10-13): per
fold k, OUTDIR/ho_sp_k and OUTDIR/ho_syn_k hold the training databases
`train-atr --hold-out-every 7 --hold-out-shift k` leaves out (sorted db_id,
positions 3+k, 10+k, ...) with their questions in Spider's and Spider-Syn's
wording, as tables.json and dev.json.

  python3 docs/experiments/folds.py OUTDIR BENCHDIR   # BENCHDIR: ../shared/bench
"""
import json, os, sys

out, bench = sys.argv[1], sys.argv[2]
tabs = json.load(open(f'{bench}/spider/tables.json'))
sp = json.load(open(f'{bench}/spider/train_spider.json'))
sy = json.load(open(f'{bench}/spider-syn/train_spider.json'))
dbs = sorted(set(q['db_id'] for q in sp))
for k in range(7):
    ho = {dbs[i] for i in range(len(dbs)) if i % 7 == (3 + k) % 7}
    for name, qs in (('sp', sp), ('syn', sy)):
        d = f'{out}/ho_{name}_{k}'
        os.makedirs(d, exist_ok=True)
        json.dump([t for t in tabs if t['db_id'] in ho], open(f'{d}/tables.json', 'w'))
        json.dump([q for q in qs if q['db_id'] in ho], open(f'{d}/dev.json', 'w'))
