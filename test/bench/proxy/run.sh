#!/usr/bin/env bash
# Proxy benchmark: pgbench select-only against PostgreSQL directly, PgBouncer
# in session mode and Atrium, in one run, so the ratios compare like with like.
#
#   test/bench/proxy/run.sh            (or: make bench-proxy, make bench)
#
# For each protocol (-M simple, -M prepared) and client count (1, 16, 64) it
# runs `pgbench -S` for $DURATION seconds against each target in turn, then
# measures connection set-up (`pgbench -S -C`). It prints TPS, average, median
# and p99 latency (from pgbench's per-transaction logs) and the ratios
# Atrium/PgBouncer and Atrium/direct, and writes the same as JSON and Markdown
# to test/bench/results/ (git-ignored).
#
# Settings (environment):
#   DURATION=20          seconds per run (shorten for a smoke test)
#   CLIENTS="1 16 64"    client counts
#   MODES="simple prepared"
#   CONNECT_CLIENTS=16   clients for the connection set-up runs (empty: skip)
#   THREADS=2            pgbench worker threads (capped at the client count)
#   SCALE=10             pgbench scale factor of the benchmark database
#   BENCH_DB=atrium_bench
#   PGBOUNCER_PORT=6439, ATRIUM_PORT=6434   spare ports for the throwaway servers
#   ATRIUM_BIN=bin/atrium                    (built by make bench)
#   TARGETS="direct pgbouncer atrium"        (a subset for a smoke test)
#
# No CPU pinning: pgbench, PostgreSQL and the proxy share the machine's cores,
# as they would on a small host. On a 2-core machine the proxies compete with
# pgbench and PostgreSQL for CPU, so absolute numbers are low; the ratios are
# what this measures.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
# shellcheck source=deploy/lib.sh
source "$ROOT/deploy/lib.sh"
LOG_PREFIX=bench-proxy

DURATION=${DURATION:-20}
CLIENTS=${CLIENTS:-1 16 64}
MODES=${MODES:-simple prepared}
CONNECT_CLIENTS=${CONNECT_CLIENTS-16}
THREADS=${THREADS:-2}
SCALE=${SCALE:-10}
BENCH_DB=${BENCH_DB:-atrium_bench}
PGBOUNCER_PORT=${PGBOUNCER_PORT:-6439}
ATRIUM_PORT=${ATRIUM_PORT:-6434}
ATRIUM_BIN=${ATRIUM_BIN:-$ROOT/bin/atrium}
RESULTS_DIR=$ROOT/test/bench/results

for cmd in pgbench pgbouncer psql jq; do
	command -v "$cmd" >/dev/null || die "$cmd not found; run 'make deps'"
done
pg_accepting || die "PostgreSQL does not answer on $PG_HOST:$PG_PORT; run 'make deps'"
for port in "$PGBOUNCER_PORT" "$ATRIUM_PORT"; do
	if port_open 127.0.0.1 "$port"; then
		die "port $port is in use; set PGBOUNCER_PORT / ATRIUM_PORT to spare ports"
	fi
done

# TLS off on every hop (client to proxy, proxy to server, and direct): the
# server here has ssl = on, and libpq would otherwise encrypt the direct runs
# only, since PgBouncer talks plain TCP to clients and server by default.
export PGSSLMODE=disable

work=$(mktemp -d /tmp/atrium-bench-proxy.XXXXXX)
chmod 0755 "$work"
pgbouncer_pid=
atrium_pid=
cleanup() {
	stop_pgbouncer
	if [ -n "$atrium_pid" ]; then
		kill -TERM "$atrium_pid" 2>/dev/null || true
		wait "$atrium_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- the benchmark database ---------------------------------------------------
have_scale=$(psql_admin -d "$BENCH_DB" -Atqc 'SELECT count(*) FROM pgbench_branches' 2>/dev/null || echo 0)
if [ "$have_scale" != "$SCALE" ]; then
	log "initialising $BENCH_DB at scale $SCALE (once; reused by later runs)"
	psql_admin -d postgres -q -v db="$BENCH_DB" <<-'SQL'
		SELECT format('DROP DATABASE IF EXISTS %I WITH (FORCE)', :'db') \gexec
		SELECT format('CREATE DATABASE %I', :'db') \gexec
	SQL
	pgbench -i -q -s "$SCALE" -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" "$BENCH_DB" 2>&1 | tail -n 1
else
	log "reusing $BENCH_DB (scale $SCALE)"
fi

# --- PgBouncer (session mode, throwaway) -----------------------------------------
cat >"$work/pgbouncer.ini" <<EOF
[databases]
* = host=$PG_HOST port=$PG_PORT

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $PGBOUNCER_PORT
unix_socket_dir =
auth_type = trust
auth_file = $work/userlist.txt
pool_mode = session
max_client_conn = 400
default_pool_size = 80
max_db_connections = 0
ignore_startup_parameters = extra_float_digits
logfile = $work/pgbouncer.log
pidfile = $work/pgbouncer.pid
log_connections = 0
log_disconnections = 0
EOF
echo "\"$PG_USER\" \"\"" >"$work/userlist.txt"
bouncer_args=("$work/pgbouncer.ini")
if [ "$(id -u)" -eq 0 ]; then
	# PgBouncer refuses to run as root.
	chown -R postgres "$work"
	bouncer_args=(-u postgres "${bouncer_args[@]}")
fi

# PgBouncer is started fresh for each of its runs and stopped after, so the
# server connections it pools never count against max_connections while the
# other targets run.
start_pgbouncer() {
	pgbouncer -q "${bouncer_args[@]}" >>"$work/pgbouncer.out" 2>&1 &
	pgbouncer_pid=$!
	wait_for 20 "PgBouncer on 127.0.0.1:$PGBOUNCER_PORT" port_open 127.0.0.1 "$PGBOUNCER_PORT" >/dev/null ||
		{
			cat "$work/pgbouncer.out" "$work/pgbouncer.log" >&2 2>/dev/null || true
			die "PgBouncer did not start"
		}
}
stop_pgbouncer() {
	if [ -n "$pgbouncer_pid" ]; then
		kill -TERM "$pgbouncer_pid" 2>/dev/null || true
		wait "$pgbouncer_pid" 2>/dev/null || true
		pgbouncer_pid=
	fi
}

# --- Atrium ------------------------------------------------------------------------
read -r -a targets <<<"${TARGETS:-direct pgbouncer atrium}"
atrium_version=none
if [[ " ${targets[*]} " == *" atrium "* ]]; then
	atrium_args=(serve --listen "127.0.0.1:$ATRIUM_PORT" --upstream "$PG_HOST:$PG_PORT" --upstream-sslmode disable)
	[ -x "$ATRIUM_BIN" ] || die "$ATRIUM_BIN not found; run 'make build'"
	serve_help=$("$ATRIUM_BIN" serve --help 2>&1 || true)
	if grep -qE -- '-max-connections' <<<"$serve_help"; then
		atrium_args+=(--max-connections 1000)
	fi
	# Per-connection info logs would cost the -C runs; PgBouncer's are off too.
	# No admin listener: the benchmark measures the relay, and a running
	# demo already holds the default admin port.
	if grep -qE -- '-admin-listen' <<<"$serve_help"; then
		atrium_args+=(--admin-listen "")
	fi
	if grep -qE -- '-log-level' <<<"$serve_help"; then
		atrium_args+=(--log-level warn)
	fi
	"$ATRIUM_BIN" "${atrium_args[@]}" >"$work/atrium.log" 2>&1 &
	atrium_pid=$!
	atrium_ready() {
		kill -0 "$atrium_pid" 2>/dev/null || {
			tail -n 20 "$work/atrium.log" >&2
			die "Atrium exited during start-up (is 'atrium serve' implemented?)"
		}
		pg_isready -q -h 127.0.0.1 -p "$ATRIUM_PORT" -U "$PG_USER" -d "$BENCH_DB" -t 1
	}
	wait_for 30 "Atrium on 127.0.0.1:$ATRIUM_PORT" atrium_ready >/dev/null || die "Atrium did not start"
	atrium_version=$("$ATRIUM_BIN" version | awk '{print $2}')
fi

target_port() {
	case $1 in
	direct) echo "$PG_PORT" ;;
	pgbouncer) echo "$PGBOUNCER_PORT" ;;
	atrium) echo "$ATRIUM_PORT" ;;
	esac
}

# run_pgbench TARGET MODE CLIENTS CONNECT(0|1) appends one result line:
# target mode clients tps avg_ms p50_ms p99_ms transactions
results=$work/results.tsv
: >"$results"
run_pgbench() {
	local target=$1 mode=$2 clients=$3 connect=$4
	local port threads name out
	port=$(target_port "$target")
	threads=$((clients < THREADS ? clients : THREADS))
	name=$target-$mode-$clients-$connect
	if [ "$target" = pgbouncer ]; then start_pgbouncer; fi
	local args=(-n -S -M "$mode" -c "$clients" -j "$threads" -T "$DURATION"
		-l --log-prefix="$work/log-$name" -h 127.0.0.1 -p "$port" -U "$PG_USER")
	if [ "$connect" -eq 1 ]; then args+=(-C); fi
	if ! out=$(pgbench "${args[@]}" "$BENCH_DB" 2>&1); then
		echo "$out" >&2
		die "pgbench against $target failed"
	fi
	stop_pgbouncer
	local tps
	tps=$(awk '/^tps = / { print $3; exit }' <<<"$out")
	# Field 3 of pgbench's per-transaction log is the latency in microseconds.
	cat "$work"/log-"$name".* | awk '{ print $3 }' | sort -n |
		awk -v t="$target" -v m="$mode" -v c="$clients" -v k="$connect" -v tps="$tps" '
			{ v[NR] = $1; s += $1 }
			END {
				if (NR == 0) { print t, m, c, k, tps, 0, 0, 0, 0; exit }
				p50 = v[int((NR - 1) * 0.50) + 1]; p99 = v[int((NR - 1) * 0.99) + 1]
				printf "%s %s %s %s %.1f %.3f %.3f %.3f %d\n", t, m, c, k, tps, s / NR / 1000, p50 / 1000, p99 / 1000, NR
			}' >>"$results"
	rm -f "$work"/log-"$name".*
	tail -n 1 "$results" | awk '{ printf "  %-9s %-8s c=%-3s %s tps=%-10s avg=%sms p50=%sms p99=%sms\n", $1, $2, $3, ($4 ? "-C" : "  "), $5, $6, $7, $8 }'
}

log "warm-up: 5 s against PostgreSQL"
pgbench -n -S -c 4 -j 2 -T 5 -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" "$BENCH_DB" >/dev/null 2>&1 || true
runs=0
for _ in $MODES; do for _ in $CLIENTS; do runs=$((runs + ${#targets[@]})); done; done
[ -n "$CONNECT_CLIENTS" ] && runs=$((runs + ${#targets[@]}))
log "$runs runs of ${DURATION}s (about $((runs * DURATION / 60 + 1)) min); targets interleaved so drift hits all alike"
for mode in $MODES; do
	for clients in $CLIENTS; do
		for target in "${targets[@]}"; do
			run_pgbench "$target" "$mode" "$clients" 0
		done
	done
done
if [ -n "$CONNECT_CLIENTS" ]; then
	for target in "${targets[@]}"; do
		run_pgbench "$target" simple "$CONNECT_CLIENTS" 1
	done
fi

# --- report -------------------------------------------------------------------------
stamp=$(date -u +%Y-%m-%dT%H:%M:%SZ)
machine="$(nproc) CPUs ($(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)), $(awk '/^MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo) RAM"
pg_version=$(psql_admin -d postgres -Atqc 'SHOW server_version')
bouncer_version=$(pgbouncer --version | awk 'NR == 1 { print $2 }')
mkdir -p "$RESULTS_DIR"
base=$RESULTS_DIR/proxy-$(date -u +%Y%m%d-%H%M%S)

jq -R -s --arg stamp "$stamp" --arg machine "$machine" --arg pg "$pg_version" --arg bouncer "$bouncer_version" \
	--arg atrium "$atrium_version" --argjson duration "$DURATION" --argjson scale "$SCALE" '
	[split("\n")[] | select(length > 0) | split(" ") |
	 {target: .[0], mode: .[1], clients: (.[2] | tonumber), connect_per_tx: (.[3] == "1"),
	  tps: (.[4] | tonumber), latency_avg_ms: (.[5] | tonumber), latency_p50_ms: (.[6] | tonumber),
	  latency_p99_ms: (.[7] | tonumber), transactions: (.[8] | tonumber)}] as $runs |
	{benchmark: "proxy", date: $stamp, machine: $machine, postgresql: $pg, pgbouncer: $bouncer,
	 atrium: $atrium, duration_s: $duration, scale: $scale,
	 command: "PGSSLMODE=disable pgbench -n -S -M MODE -c CLIENTS -j min(CLIENTS,2) -T DURATION -l [-C]",
	 runs: $runs,
	 ratios: [$runs | group_by([.connect_per_tx, (.mode != "simple"), .clients])[] |
	   (map({key: .target, value: .}) | from_entries) as $g |
	   select($g.atrium and $g.pgbouncer and $g.direct) |
	   {mode: $g.atrium.mode, clients: $g.atrium.clients, connect_per_tx: $g.atrium.connect_per_tx,
	    tps_atrium_over_pgbouncer: ($g.atrium.tps / $g.pgbouncer.tps),
	    tps_atrium_over_direct: ($g.atrium.tps / $g.direct.tps),
	    p50_added_us_over_direct: (($g.atrium.latency_p50_ms - $g.direct.latency_p50_ms) * 1000),
	    p50_added_us_pgbouncer_over_direct: (($g.pgbouncer.latency_p50_ms - $g.direct.latency_p50_ms) * 1000)}]}
' "$results" >"$base.json"

jq -r '
	def f(n): (n * 100 | round) / 100;
	"Proxy benchmark, \(.date): pgbench -S (select-only), scale \(.scale), \(.duration_s) s per run.",
	"Machine: \(.machine); PostgreSQL \(.postgresql), PgBouncer \(.pgbouncer) (session mode), Atrium \(.atrium).",
	"pgbench, PostgreSQL and the proxy share the same CPUs (no pinning); TLS off on every hop.",
	"",
	"| protocol | clients | TPS direct | TPS PgBouncer | TPS Atrium | Atrium/PgBouncer | Atrium/direct | p50 ms direct / PgBouncer / Atrium | p99 ms direct / PgBouncer / Atrium |",
	"|---|---:|---:|---:|---:|---:|---:|---:|---:|",
	(.runs | group_by([.connect_per_tx, (.mode != "simple"), .clients])[] |
	  (map({key: .target, value: .}) | from_entries) as $g |
	  select($g.atrium and $g.pgbouncer and $g.direct) |
	  "| \($g.atrium.mode)\(if $g.atrium.connect_per_tx then " -C" else "" end) | \($g.atrium.clients) | \($g.direct.tps | round) | \($g.pgbouncer.tps | round) | \($g.atrium.tps | round) | \(f($g.atrium.tps / $g.pgbouncer.tps)) | \(f($g.atrium.tps / $g.direct.tps)) | \($g.direct.latency_p50_ms) / \($g.pgbouncer.latency_p50_ms) / \($g.atrium.latency_p50_ms) | \($g.direct.latency_p99_ms) / \($g.pgbouncer.latency_p99_ms) / \($g.atrium.latency_p99_ms) |"),
	"",
	"Every run:",
	"",
	"| protocol | clients | target | TPS | avg ms | p50 ms | p99 ms |",
	"|---|---:|---|---:|---:|---:|---:|",
	(.runs[] | "| \(.mode)\(if .connect_per_tx then " -C (new connection per transaction)" else "" end) | \(.clients) | \(.target) | \(.tps | round) | \(.latency_avg_ms) | \(.latency_p50_ms) | \(.latency_p99_ms) |"),
	"",
	"| protocol | clients | TPS Atrium/PgBouncer | TPS Atrium/direct | p50 added by Atrium (µs) | p50 added by PgBouncer (µs) |",
	"|---|---:|---:|---:|---:|---:|",
	(.ratios[] | "| \(.mode)\(if .connect_per_tx then " -C" else "" end) | \(.clients) | \(f(.tps_atrium_over_pgbouncer)) | \(f(.tps_atrium_over_direct)) | \(.p50_added_us_over_direct | round) | \(.p50_added_us_pgbouncer_over_direct | round) |")
' "$base.json" >"$base.md"
cp "$base.json" "$RESULTS_DIR/proxy-latest.json"
cp "$base.md" "$RESULTS_DIR/proxy-latest.md"

echo
cat "$base.md"
echo
log "results: ${base#"$ROOT"/}.json and .md (also proxy-latest.*)"
