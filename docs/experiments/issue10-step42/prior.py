#!/usr/bin/env python3
"""Step 42 of docs/retrieval.md: a weights file's networks with the linear
path's weight on pair slot 0 (the hybrid candidate score s) raised so that
each table logit gains LAMBDA x (s - pair_mean[0]); nothing else changes.
The operating point is left to train-atr --recalibrate (recal.sh).

    python3 prior.py IN.json OUT.json [LAMBDA]   (default 2)"""
import json
import sys

src, dst = sys.argv[1:3]
lam = float(sys.argv[3]) if len(sys.argv) > 3 else 2.0
m = json.load(open(src))
for net in m.get('members') or [m]:
    # pairLogit standardises slot 0 as (s - mean) / std before u[0].
    net['u'][0] += lam * net['pair_std'][0]
json.dump(m, open(dst, 'w'))
