#!/bin/sh
# NL latency benchmark for `make bench` (from the repository root): SELECT 1
# through Atrium vs a cached and an uncached natural-language question
# (instant fake LLM), same run; first on a small shop, then on the Spider dev
# databases with every dev question whose gold SQL PostgreSQL accepts.
# Extra arguments go to both runs (-n, -redis, -dsn).
set -eu
cd "$(dirname "$0")/../../.."
spider="${ATRIUM_SPIDER:-../shared/bench/spider}"
go run ./test/bench/nl "$@"
if [ -f "$spider/dev.json" ]; then
	go run ./test/bench/nl -spider "$spider" "$@"
else
	echo "Spider data not found at $spider (set ATRIUM_SPIDER): Spider dev run skipped" >&2
fi
