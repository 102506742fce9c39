#!/usr/bin/env python3
"""Step 47 of docs/retrieval.md: a weights file that ranks with step 37's
words-v1 networks (RANK, e.g. issue10-step37/rw_K.json) and abstains with
the shipped networks (ABSTAIN, e.g. z_K.json or retriever/lite_weights.json)
as the weights format's "abstain" model; both run on the catalog's
embedder (words-v1).

    python3 compose.py RANK ABSTAIN OUT"""
import json
import sys

rank, abst, out = sys.argv[1:4]
m = json.load(open(rank))
a = json.load(open(abst))
a.pop('abstain', None)
m['abstain'] = a
m['training']['data'] += ('; abstention decided by "abstain": the shipped builtin-v1 networks and'
                          ' operating point, run on words-v1 cosines (docs/retrieval.md step 47)')
json.dump(m, open(out, 'w'), indent=1)
