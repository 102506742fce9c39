#!/usr/bin/env bash
# Proxy benchmark: pgbench select-only against PostgreSQL directly, PgBouncer
# in session mode and Atrium, in one run, so the ratios compare like with like.
#
#   test/bench/proxy/run.sh            (or: make bench-proxy, make bench)
#
# For each protocol (-M simple, -M prepared) and client count (1, 16, 64) it
# runs `pgbench -S` for $DURATION seconds against each target in turn, then
# measures connection set-up (`pgbench -S -C`). It prints TPS, average, median
# and p99 latency (from pgbench's per-transaction logs), each proxy's CPU
# seconds per 100k transactions, the load average, and the ratios
# Atrium/PgBouncer and Atrium/direct, and writes the same as JSON and Markdown
# to test/bench/results/ (git-ignored).
#
# Method (why the numbers look the way they do):
# - Targets alternate within each (protocol, clients) cell (direct,
#   PgBouncer, Atrium, then the next cell), and REPEATS > 1 runs the whole
#   cycle again, so drift in the machine's load hits every target alike. A
#   cell reports the median TPS and latency of its repeats.
# - CPU per transaction is the figure that carries to other machines: on a
#   small host pgbench, PostgreSQL and the proxy compete for the same cores,
#   so TPS mostly measures the competition. For each proxy the script reads
#   utime+stime of its process from /proc/PID/stat just before and after each
#   pgbench run and reports (CPU seconds / transactions) * 100000, summed over
#   the repeats. PgBouncer is one process (one thread); Atrium's figure covers
#   all its threads (Go runtime included).
# - The 1-minute load average is recorded after every run and reported per
#   cell; runs under a load above the core count are noisy in TPS but much
#   less so in CPU per transaction.
# - Every hop is plain TCP on 127.0.0.1 (no TLS, no Unix sockets), the same
#   for all three targets. PgBouncer is started fresh for each of its runs
#   (so its server connections never count against max_connections during
#   the other targets' runs); Atrium runs throughout, without its admin
#   listener and with warn-level logs, as PgBouncer runs without logging
#   connections.
# - Latency is pgbench's per-transaction latency (-l), client side, so "added
#   median latency" is a proxy's p50 minus direct's p50 in the same cell.
#
# Settings (environment):
#   DURATION=20          seconds per run (shorten for a smoke test)
#   REPEATS=1            cycles over every cell (medians across them)
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
# pgbench and PostgreSQL for CPU, so absolute numbers are low; the ratios and
# the CPU per transaction are what this measures.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
# shellcheck source=deploy/lib.sh
source "$ROOT/deploy/lib.sh"
LOG_PREFIX=bench-proxy

DURATION=${DURATION:-20}
REPEATS=${REPEATS:-1}
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

# cpu_ticks PID prints the process's user+system CPU time in clock ticks
# (all its threads), or 0 without a process.
cpu_ticks() {
	if [ -n "$1" ] && [ -r "/proc/$1/stat" ]; then
		# Fields 14 and 15 after the command name, which is in parentheses
		# and may hold spaces: strip through the last ") " first.
		sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
	else
		echo 0
	fi
}
clk_tck=$(getconf CLK_TCK)

# run_pgbench TARGET MODE CLIENTS CONNECT(0|1) appends one result line:
# target mode clients connect tps avg_ms p50_ms p99_ms transactions
# proxy_cpu_s load1
results=$work/results.tsv
: >"$results"
run_pgbench() {
	local target=$1 mode=$2 clients=$3 connect=$4
	local port threads name out pid=
	port=$(target_port "$target")
	threads=$((clients < THREADS ? clients : THREADS))
	name=$target-$mode-$clients-$connect
	if [ "$target" = pgbouncer ]; then start_pgbouncer; fi
	case $target in
	pgbouncer) pid=$pgbouncer_pid ;;
	atrium) pid=$atrium_pid ;;
	esac
	local args=(-n -S -M "$mode" -c "$clients" -j "$threads" -T "$DURATION"
		-l --log-prefix="$work/log-$name" -h 127.0.0.1 -p "$port" -U "$PG_USER")
	if [ "$connect" -eq 1 ]; then args+=(-C); fi
	local cpu0 cpu1
	cpu0=$(cpu_ticks "$pid")
	if ! out=$(pgbench "${args[@]}" "$BENCH_DB" 2>&1); then
		echo "$out" >&2
		die "pgbench against $target failed"
	fi
	cpu1=$(cpu_ticks "$pid")
	stop_pgbouncer
	local tps load1
	tps=$(awk '/^tps = / { print $3; exit }' <<<"$out")
	load1=$(cut -d' ' -f1 /proc/loadavg)
	# Field 3 of pgbench's per-transaction log is the latency in microseconds.
	cat "$work"/log-"$name".* | awk '{ print $3 }' | sort -n |
		awk -v t="$target" -v m="$mode" -v c="$clients" -v k="$connect" -v tps="$tps" \
			-v cpu="$(((cpu1 - cpu0)))" -v hz="$clk_tck" -v la="$load1" '
			{ v[NR] = $1; s += $1 }
			END {
				if (NR == 0) { print t, m, c, k, tps, 0, 0, 0, 0, cpu / hz, la; exit }
				p50 = v[int((NR - 1) * 0.50) + 1]; p99 = v[int((NR - 1) * 0.99) + 1]
				printf "%s %s %s %s %.1f %.3f %.3f %.3f %d %.2f %s\n", t, m, c, k, tps, s / NR / 1000, p50 / 1000, p99 / 1000, NR, cpu / hz, la
			}' >>"$results"
	rm -f "$work"/log-"$name".*
	tail -n 1 "$results" | awk '{
		cpu = ($1 == "direct" || $9 == 0) ? "" : sprintf(" cpu/100k=%.2fs", $10 / $9 * 100000)
		printf "  %-9s %-8s c=%-3s %s tps=%-10s avg=%sms p50=%sms p99=%sms%s load=%s\n", $1, $2, $3, ($4 ? "-C" : "  "), $5, $6, $7, $8, cpu, $11 }'
}

log "warm-up: 5 s against PostgreSQL"
pgbench -n -S -c 4 -j 2 -T 5 -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" "$BENCH_DB" >/dev/null 2>&1 || true
runs=0
for _ in $MODES; do for _ in $CLIENTS; do runs=$((runs + ${#targets[@]})); done; done
[ -n "$CONNECT_CLIENTS" ] && runs=$((runs + ${#targets[@]}))
runs=$((runs * REPEATS))
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
log "$runs runs of ${DURATION}s (about $((runs * DURATION / 60 + 1)) min); targets interleaved so drift hits all alike; load average $load_start"
for ((rep = 1; rep <= REPEATS; rep++)); do
	[ "$REPEATS" -gt 1 ] && log "cycle $rep of $REPEATS"
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
done
load_end=$(cut -d' ' -f1-3 /proc/loadavg)

# --- report -------------------------------------------------------------------------
stamp=$(date -u +%Y-%m-%dT%H:%M:%SZ)
machine="$(nproc) CPUs ($(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)), $(awk '/^MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo) RAM"
pg_version=$(psql_admin -d postgres -Atqc 'SHOW server_version')
bouncer_version=$(pgbouncer --version | awk 'NR == 1 { print $2 }')
mkdir -p "$RESULTS_DIR"
base=$RESULTS_DIR/proxy-$(date -u +%Y%m%d-%H%M%S)

jq -R -s --arg stamp "$stamp" --arg machine "$machine" --arg pg "$pg_version" --arg bouncer "$bouncer_version" \
	--arg atrium "$atrium_version" --argjson duration "$DURATION" --argjson scale "$SCALE" \
	--argjson repeats "$REPEATS" --arg load_start "$load_start" --arg load_end "$load_end" '
	def median: sort | if length == 0 then null elif length % 2 == 1 then .[(length - 1) / 2]
		else (.[length / 2 - 1] + .[length / 2]) / 2 end;
	def per100k(cpu; tx): if tx > 0 then cpu / tx * 100000 else null end;
	def r3: . * 1000 | round / 1000;
	def ratio(a; b): if a != null and b != null and b != 0 then a / b else null end;
	[split("\n")[] | select(length > 0) | split(" ") |
	 {target: .[0], mode: .[1], clients: (.[2] | tonumber), connect_per_tx: (.[3] == "1"),
	  tps: (.[4] | tonumber), latency_avg_ms: (.[5] | tonumber), latency_p50_ms: (.[6] | tonumber),
	  latency_p99_ms: (.[7] | tonumber), transactions: (.[8] | tonumber),
	  proxy_cpu_s: (if .[0] == "direct" then null else (.[9] | tonumber) end), load1: (.[10] | tonumber)}] as $runs |
	# One cell per (connect, protocol, clients, target): medians over the
	# repeats, CPU summed over them.
	[$runs | group_by([.connect_per_tx, (.mode != "simple"), .clients, .target])[] |
	 {target: .[0].target, mode: .[0].mode, clients: .[0].clients, connect_per_tx: .[0].connect_per_tx,
	  repeats: length, tps: (map(.tps) | median), latency_avg_ms: (map(.latency_avg_ms) | median | r3),
	  latency_p50_ms: (map(.latency_p50_ms) | median | r3), latency_p99_ms: (map(.latency_p99_ms) | median | r3),
	  transactions: (map(.transactions) | add),
	  cpu_s_per_100k_tx: (if .[0].target == "direct" then null
	    else per100k(map(.proxy_cpu_s) | add; map(.transactions) | add) end),
	  load1_max: (map(.load1) | max)}] as $cells |
	{benchmark: "proxy", date: $stamp, machine: $machine, postgresql: $pg, pgbouncer: $bouncer,
	 atrium: $atrium, duration_s: $duration, repeats: $repeats, scale: $scale,
	 load_average_start: $load_start, load_average_end: $load_end,
	 command: "PGSSLMODE=disable pgbench -n -S -M MODE -c CLIENTS -j min(CLIENTS,2) -T DURATION -l [-C]",
	 runs: $runs, cells: $cells,
	 ratios: [$cells | group_by([.connect_per_tx, (.mode != "simple"), .clients])[] |
	   (map({key: .target, value: .}) | from_entries) as $g |
	   select($g.atrium and $g.pgbouncer and $g.direct) |
	   {mode: $g.atrium.mode, clients: $g.atrium.clients, connect_per_tx: $g.atrium.connect_per_tx,
	    tps_atrium_over_pgbouncer: ratio($g.atrium.tps; $g.pgbouncer.tps),
	    tps_atrium_over_direct: ratio($g.atrium.tps; $g.direct.tps),
	    tps_pgbouncer_over_direct: ratio($g.pgbouncer.tps; $g.direct.tps),
	    cpu_per_tx_atrium_over_pgbouncer: ratio($g.atrium.cpu_s_per_100k_tx; $g.pgbouncer.cpu_s_per_100k_tx),
	    cpu_s_per_100k_tx_atrium: $g.atrium.cpu_s_per_100k_tx,
	    cpu_s_per_100k_tx_pgbouncer: $g.pgbouncer.cpu_s_per_100k_tx,
	    p50_added_us_over_direct: (($g.atrium.latency_p50_ms - $g.direct.latency_p50_ms) * 1000 | round),
	    p50_added_us_pgbouncer_over_direct: (($g.pgbouncer.latency_p50_ms - $g.direct.latency_p50_ms) * 1000 | round),
	    load1_max: ([$g[].load1_max] | max)}]}
' "$results" >"$base.json"

jq -r '
	def f(n): if n == null then "-" else (n * 100 | round) / 100 end;
	def proto: "\(.mode)\(if .connect_per_tx then " -C" else "" end)";
	"Proxy benchmark, \(.date): pgbench -S (select-only), scale \(.scale), \(.duration_s) s per run, \(.repeats) cycle(s) (medians).",
	"Machine: \(.machine); PostgreSQL \(.postgresql), PgBouncer \(.pgbouncer) (session mode), Atrium \(.atrium).",
	"Load average (1, 5, 15 min) at start: \(.load_average_start); at end: \(.load_average_end).",
	"pgbench, PostgreSQL and the proxy share the same CPUs (no pinning); TLS off on every hop.",
	"CPU s/100k tx: the proxy process'"'"'s user+system CPU seconds per 100,000 transactions (the figure that carries to bigger machines).",
	"",
	"| protocol | clients | TPS direct | TPS PgBouncer | TPS Atrium | Atrium/PgBouncer | Atrium/direct | PgBouncer/direct | CPU s/100k tx PgBouncer | CPU s/100k tx Atrium | CPU Atrium/PgBouncer | p50 µs added PgBouncer / Atrium | max load |",
	"|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
	(.ratios[] as $r | .cells | map(select(.mode == $r.mode and .clients == $r.clients and .connect_per_tx == $r.connect_per_tx)) |
	  (map({key: .target, value: .}) | from_entries) as $g |
	  "| \($g.atrium | proto) | \($r.clients) | \($g.direct.tps | round) | \($g.pgbouncer.tps | round) | \($g.atrium.tps | round) | \(f($r.tps_atrium_over_pgbouncer)) | \(f($r.tps_atrium_over_direct)) | \(f($r.tps_pgbouncer_over_direct)) | \(f($r.cpu_s_per_100k_tx_pgbouncer)) | \(f($r.cpu_s_per_100k_tx_atrium)) | \(f($r.cpu_per_tx_atrium_over_pgbouncer)) | \($r.p50_added_us_pgbouncer_over_direct | round) / \($r.p50_added_us_over_direct | round) | \($r.load1_max) |"),
	"",
	"Latency (medians over the cycles):",
	"",
	"| protocol | clients | p50 ms direct / PgBouncer / Atrium | p99 ms direct / PgBouncer / Atrium |",
	"|---|---:|---:|---:|",
	(.cells | group_by([.connect_per_tx, (.mode != "simple"), .clients])[] |
	  (map({key: .target, value: .}) | from_entries) as $g |
	  select($g.atrium and $g.pgbouncer and $g.direct) |
	  "| \($g.atrium | proto) | \($g.atrium.clients) | \($g.direct.latency_p50_ms) / \($g.pgbouncer.latency_p50_ms) / \($g.atrium.latency_p50_ms) | \($g.direct.latency_p99_ms) / \($g.pgbouncer.latency_p99_ms) / \($g.atrium.latency_p99_ms) |"),
	"",
	"Every run, in the order run:",
	"",
	"| protocol | clients | target | TPS | avg ms | p50 ms | p99 ms | proxy CPU s | CPU s/100k tx | load |",
	"|---|---:|---|---:|---:|---:|---:|---:|---:|---:|",
	(.runs[] | "| \(proto)\(if .connect_per_tx then " (new connection per transaction)" else "" end) | \(.clients) | \(.target) | \(.tps | round) | \(.latency_avg_ms) | \(.latency_p50_ms) | \(.latency_p99_ms) | \(f(.proxy_cpu_s)) | \(if .proxy_cpu_s == null or .transactions == 0 then "-" else f(.proxy_cpu_s / .transactions * 100000) end) | \(.load1) |")
' "$base.json" >"$base.md"
cp "$base.json" "$RESULTS_DIR/proxy-latest.json"
cp "$base.md" "$RESULTS_DIR/proxy-latest.md"

echo
cat "$base.md"
echo
log "results: ${base#"$ROOT"/}.json and .md (also proxy-latest.*)"
