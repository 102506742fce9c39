#!/usr/bin/env bash
# Catalog sync benchmark: cold sync and no-change re-sync of a synthetic
# database with a built-in embedder, at 10,000 tables and at 100,000.
#   ATRIUM_BENCH_TABLES=N        size of the first run (default 10000)
#   ATRIUM_BENCH_LARGE=N         size of the large run (default 100000; 0 skips it)
#   ATRIUM_BENCH_VIEW_EVERY=K    every Kth relation of the large run is a view (default 2)
#   ATRIUM_BENCH_EMBEDDER=KIND   builtin or words (default: the binary's, builtin)
#   ATRIUM_TEST_PG=URL           server (default postgres://postgres@127.0.0.1:5432/postgres)
set -euo pipefail
cd "$(dirname "$0")/../../.."
admin="${ATRIUM_TEST_PG:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}"
bin="$(mktemp -d)/catalogbench"
go build -o "$bin" ./test/bench/catalog
echo "== catalog sync, ${ATRIUM_BENCH_TABLES:-10000} tables"
"$bin" -admin-dsn "$admin" ${ATRIUM_BENCH_EMBEDDER:+-embedder "$ATRIUM_BENCH_EMBEDDER"} -tables "${ATRIUM_BENCH_TABLES:-10000}"
large="${ATRIUM_BENCH_LARGE:-100000}"
if [ "$large" != "0" ]; then
	# Every other relation is a view: creating 100,000 tables costs the
	# server an fsync per data file, over an hour on a slow shared disk.
	echo "== catalog sync, $large relations, half of them views (must complete)"
	"$bin" -admin-dsn "$admin" ${ATRIUM_BENCH_EMBEDDER:+-embedder "$ATRIUM_BENCH_EMBEDDER"} -tables "$large" -per-schema 500 -view-every "${ATRIUM_BENCH_VIEW_EVERY:-2}"
fi
