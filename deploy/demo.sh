#!/usr/bin/env bash
# Runs Atrium's demo, or stops it.
#
#   deploy/demo.sh start   load the sample database, build Atrium's catalog of
#                          it, start `atrium serve` in the background on
#                          $DEMO_LISTEN, and run a scripted psql session
#                          through it. Atrium is left running.
#   deploy/demo.sh stop    stop the demo's Atrium, and PostgreSQL/Redis only
#                          if deploy/services.sh started them.
#
# `make demo` runs install.sh, services.sh start and `make build` first.
# Running `start` again restarts Atrium cleanly.
#
# Steps whose command is not implemented yet in bin/atrium are skipped with a
# note rather than failing the demo.
set -euo pipefail
# shellcheck source=deploy/lib.sh
source "$(dirname "$0")/lib.sh"
LOG_PREFIX=demo

SAMPLE_DB=${SAMPLE_DB:-atrium_demo}
DEMO_LISTEN=${DEMO_LISTEN:-127.0.0.1:6433}
DEMO_HOST=${DEMO_LISTEN%:*}
DEMO_PORT=${DEMO_LISTEN##*:}
ATRIUM_BIN=${ATRIUM_BIN:-$ATRIUM_ROOT/bin/atrium}
PID_FILE=$RUN_DIR/atrium.pid
LOG_FILE=$RUN_DIR/atrium.log
UPSTREAM_DSN="postgres://$PG_USER@$PG_HOST:$PG_PORT/$SAMPLE_DB?sslmode=disable"
CLIENT_DSN="postgres://$PG_USER@$DEMO_HOST:$DEMO_PORT/$SAMPLE_DB"

notes=()
note() {
	notes+=("$*")
	log "skipped: $*"
}

# implemented reports whether an atrium subcommand exists beyond its
# placeholder: a real command answers --help with status 0.
implemented() {
	"$ATRIUM_BIN" "$@" --help >/dev/null 2>&1
}

serve_has_flag() {
	# Captured first: grep -q would close the pipe early, and pipefail would
	# then report the writer's SIGPIPE as "no such flag".
	local help
	help=$("$ATRIUM_BIN" serve --help 2>&1 || true)
	grep -qE -- "^ *--?$1( |\$)" <<<"$help"
}

stop_atrium() {
	if pid_alive "$PID_FILE"; then
		log "stopping the demo's Atrium (pid $(cat "$PID_FILE"))"
		stop_pidfile "$PID_FILE" 20
	else
		rm -f "$PID_FILE"
	fi
}

start() {
	mkdir -p "$RUN_DIR"
	[ -x "$ATRIUM_BIN" ] || die "$ATRIUM_BIN not found; run 'make build' (or 'make demo')"
	log "Atrium $("$ATRIUM_BIN" version 2>/dev/null | awk '{print $2}')"

	"$ATRIUM_ROOT/deploy/load-sample.sh"

	if implemented migrate; then
		log "atrium migrate (catalog schema in $SAMPLE_DB)"
		"$ATRIUM_BIN" migrate --dsn "$UPSTREAM_DSN"
	else
		note "'atrium migrate' is not implemented yet"
	fi
	if implemented catalog sync; then
		log "atrium catalog sync (the catalog of $SAMPLE_DB's tables)"
		"$ATRIUM_BIN" catalog sync --dsn "$UPSTREAM_DSN"
	else
		note "'atrium catalog sync' is not implemented yet"
	fi

	stop_atrium
	if port_open "$DEMO_HOST" "$DEMO_PORT"; then
		die "something else already listens on $DEMO_LISTEN; stop it or set DEMO_LISTEN=host:port"
	fi
	if ! implemented serve; then
		note "'atrium serve' is not implemented yet: no proxy to run the psql session through"
		finish
		return
	fi
	serve_args=(serve --listen "$DEMO_LISTEN" --upstream "$PG_HOST:$PG_PORT")
	if serve_has_flag catalog-dsn; then
		# The catalog migrate and sync just built, in the sample database.
		serve_args+=(--catalog-dsn "$UPSTREAM_DSN")
	fi
	if serve_has_flag redis; then
		serve_args+=(--redis "redis://$REDIS_HOST:$REDIS_PORT/0")
	fi
	# Extra flags for the demo's Atrium, e.g. DEMO_SERVE_FLAGS="--llm-url http://...".
	read -r -a extra <<<"${DEMO_SERVE_FLAGS:-}"
	serve_args+=("${extra[@]}")
	log "starting: bin/atrium ${serve_args[*]} (log: ${LOG_FILE#"$ATRIUM_ROOT"/})"
	# setsid: the server outlives make and ignores the terminal's Ctrl-C.
	setsid "$ATRIUM_BIN" "${serve_args[@]}" >"$LOG_FILE" 2>&1 </dev/null &
	echo $! >"$PID_FILE"
	ready() {
		if ! pid_alive "$PID_FILE"; then
			tail -n 20 "$LOG_FILE" >&2 || true
			rm -f "$PID_FILE"
			die "Atrium exited during start-up (log above, in $LOG_FILE)"
		fi
		pg_isready -q -h "$DEMO_HOST" -p "$DEMO_PORT" -d "$SAMPLE_DB" -U "$PG_USER" -t 1
	}
	if ! wait_for 30 "Atrium on $DEMO_LISTEN" ready; then
		tail -n 20 "$LOG_FILE" >&2 || true
		stop_atrium
		die "Atrium did not start accepting on $DEMO_LISTEN (log above, in $LOG_FILE)"
	fi

	session
	finish
}

# session runs the scripted psql session through Atrium; psql echoes each
# command (-a) so the output reads like a terminal transcript.
session() {
	local script=$RUN_DIR/demo-session.sql
	cat >"$script" <<'SQL'
-- Atrium answers this itself, at its interception point:
SHOW atrium.version;

-- Ordinary SQL passes through to PostgreSQL untouched.
-- Revenue by product category over the last 90 days of the sample data:
SELECT cat.name AS category,
       count(DISTINCT o.order_id) AS orders,
       sum(oi.quantity * oi.unit_price - oi.discount_amount) AS revenue
FROM shop.orders o
JOIN shop.order_items oi USING (order_id)
JOIN shop.products p USING (product_id)
JOIN shop.categories cat USING (category_id)
WHERE o.status <> 'cancelled'
  AND o.ordered_at >= timestamptz '2025-06-30' - interval '90 days'
GROUP BY cat.name
ORDER BY revenue DESC
LIMIT 5;

-- psql's meta-commands work too:
\dt shop.*
SQL
	# The natural-language steps run in a second psql without ON_ERROR_STOP:
	# an error there (no LLM configured, say) is part of what the demo shows.
	local nl_script=$RUN_DIR/demo-session-nl.sql
	: >"$nl_script"
	local question="Which customers opened the most support tickets about late deliveries?"
	local probe
	probe=$(psql -X -w -At "$CLIENT_DSN" -c "RETRIEVE $question" 2>&1 || true)
	if grep -q 'syntax error at or near "RETRIEVE"' <<<"$probe"; then
		note "RETRIEVE is not implemented yet (the proxy passed it to PostgreSQL)"
	else
		cat >>"$nl_script" <<SQL
-- RETRIEVE shows the tables Atrium would use for a question, and how they join:
RETRIEVE $question;

SQL
	fi
	probe=$(psql -X -w -At "$CLIENT_DSN" -c "/* nl: $question */" 2>&1 || true)
	if [ -z "$probe" ]; then
		note "natural-language questions are not implemented yet (PostgreSQL saw an empty query)"
	else
		cat >>"$nl_script" <<SQL
-- A question in natural language. Without an LLM endpoint (DEMO_SERVE_FLAGS="--llm-url ...")
-- the answer is an error that says so and shows what RETRIEVE found.
/* nl: $question */;
SQL
	fi

	echo
	echo "================ psql \"$CLIENT_DSN\" ================"
	psql -X -w -a -v ON_ERROR_STOP=1 -P pager=off "$CLIENT_DSN" -f "$script"
	if [ -s "$nl_script" ]; then
		echo
		psql -X -w -a -P pager=off "$CLIENT_DSN" -f "$nl_script" || true
	fi
	echo "=================================================================="
}

finish() {
	echo
	if pid_alive "$PID_FILE"; then
		log "Atrium is running in the background (pid $(cat "$PID_FILE"), log ${LOG_FILE#"$ATRIUM_ROOT"/})."
		log "Connect:  psql \"$CLIENT_DSN\""
		log "Stop:     make stop"
	fi
	if [ ${#notes[@]} -gt 0 ]; then
		log "not shown, because not implemented yet:"
		printf '  - %s\n' "${notes[@]}"
	fi
}

case ${1:-} in
start) start ;;
stop)
	stop_atrium
	"$ATRIUM_ROOT/deploy/services.sh" stop
	;;
*)
	echo "usage: $0 start|stop" >&2
	exit 2
	;;
esac
