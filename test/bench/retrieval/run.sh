#!/bin/sh
# RETRIEVE benchmarks (from the repository root; `make bench` runs this):
#  1. Spider dev quality and latency per method, through `atrium eval`;
#  2. test/bench/retrieval: a synthetic catalog of 100,000 tables, and every
#     Spider dev question as RETRIEVE through the proxy, each against a
#     reference measured in the same run.
# Usage: test/bench/retrieval/run.sh [--tables N] [--questions N] [--vocab zipf|common] [--dsn URL] [--keep-db] [--reuse-db]
# (--keep-db then --reuse-db skips rebuilding the synthetic catalog between runs)
set -eu
spider="${ATRIUM_SPIDER:-../shared/bench/spider}"
go build -o /tmp/atrium-bench ./cmd/atrium
/tmp/atrium-bench eval --bench "$spider" --json /tmp/atrium-eval-spider.json
go run ./test/bench/retrieval --spider "$spider" "$@"
