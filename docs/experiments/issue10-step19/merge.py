"""Step 19 of docs/retrieval.md: one ensemble of the networks of two
ensemble weights files (the first file's operating point and training
record are kept; `train-atr --recalibrate` then chooses the operating point
for the merged ensemble).

    python3 docs/experiments/issue10-step19/merge.py A.json B.json OUT.json"""
import json
import sys

a, b, out = sys.argv[1:4]
A, B = json.load(open(a)), json.load(open(b))
A['members'] = A['members'] + B['members']
json.dump(A, open(out, 'w'))
