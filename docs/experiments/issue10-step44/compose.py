#!/usr/bin/env python3
"""Step 44 of docs/retrieval.md: a weights file that ranks with step 42's
prior-ranked networks (RANK, e.g. hz_K.json) and abstains with another
file's networks and operating point (ABSTAIN, e.g. z_K.json or the shipped
retriever/lite_weights.json), as the weights format's "abstain" model.

    python3 compose.py RANK ABSTAIN OUT [LAMBDA]   (default 2)"""
import json
import sys

rank, abst, out = sys.argv[1:4]
lam = sys.argv[4] if len(sys.argv) > 4 else '2'
m = json.load(open(rank))
a = json.load(open(abst))
a.pop('abstain', None)
m['abstain'] = a
m['training']['data'] += ('; ranking networks: the abstention networks with the linear weight on the'
                          ' hybrid score raised by %s x its standard deviation'
                          ' (docs/experiments/issue10-step42/prior.py); abstention decided by "abstain"' % lam)
json.dump(m, open(out, 'w'), indent=1)
