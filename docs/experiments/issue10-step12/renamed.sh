#!/bin/bash
# Spider dev and Spider-Syn dev over renamed schemas (docs/retrieval.md,
# step 12): the shipped ensemble against the step-5 network it replaced,
# each over the original schemas and over copies renamed by
# retriever/evaluate/renamed (seed 99), without database dumps on either
# side. Run from the root of a checkout with bin/atrium built; needs
# PostgreSQL with pgvector. About 10 minutes on 2 cores.
#
#   bash docs/experiments/issue10-step12/renamed.sh /tmp/ren
set -eu
out=${1:?usage: $0 OUTDIR}
mkdir -p "$out"
git show f757429:retriever/lite_weights.json > "$out/step5.json"
for b in spider spider-syn; do
  go run ./retriever/evaluate/renamed -bench ../shared/bench/$b -out "$out/ren_$b" -plain "$out/plain_$b"
done
for b in plain_spider ren_spider plain_spider-syn ren_spider-syn; do
  # Abstention off: the floors are logits of one scorer.
  e=$(bin/atrium eval --bench "$out/$b" --abstain-floor=-inf --abstain-coverage=0 2>&1 | grep '^atr+exp' | awk '{print $2,$3,$4,$5,$6}')
  s=$(bin/atrium eval --bench "$out/$b" --abstain-floor=-inf --abstain-coverage=0 --atr-weights "$out/step5.json" 2>&1 | grep '^atr+exp' | awk '{print $2,$3,$4,$5,$6}')
  echo "$b  ensemble: $e  step-5 network: $s"
done
