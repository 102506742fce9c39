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

# The demo's verified example: the question the demo asks, with the SQL a DBA
# checked. `atrium examples add` validates it as the connecting role (parse,
# one read-only SELECT, EXPLAIN) and stores its tables. The session adds it
# after showing what retrieval alone finds for the question; each demo run
# starts without it (clear_demo_example), so every run shows both.
DEMO_QUESTION="Which customers opened the most support tickets about late deliveries?"
DEMO_EXAMPLE_SQL="SELECT c.customer_id, c.first_name || ' ' || c.last_name AS customer,
       count(DISTINCT t.ticket_id) AS late_delivery_tickets
FROM support.tickets t
JOIN support.ticket_tags tt ON tt.ticket_id = t.ticket_id
JOIN support.tags g ON g.tag_id = tt.tag_id AND g.name = 'late-delivery'
JOIN shop.customers c ON c.customer_id = t.customer_id
GROUP BY c.customer_id, customer
ORDER BY late_delivery_tickets DESC, c.customer_id
LIMIT 5"

clear_demo_example() {
	psql -X -w -q -v ON_ERROR_STOP=1 "$UPSTREAM_DSN" -v q="$DEMO_QUESTION" <<'SQL'
DELETE FROM atrium.examples WHERE question = :'q';
SQL
}

add_demo_example() {
	local have
	have=$(psql -X -w -At "$UPSTREAM_DSN" -v q="$DEMO_QUESTION" <<'SQL'
SELECT count(*) FROM atrium.examples WHERE question = :'q';
SQL
)
	if [ "$have" != "0" ]; then
		log "the demo's example is already in atrium.examples"
		return
	fi
	log "atrium examples add (a verified question→SQL pair for the demo's question)"
	"$ATRIUM_BIN" examples add --dsn "$UPSTREAM_DSN" --question "$DEMO_QUESTION" --sql "$DEMO_EXAMPLE_SQL" \
		--note "added by deploy/demo.sh"
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

	clear_demo_example

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
	local question=$DEMO_QUESTION
	cat >"$nl_script" <<SQL
-- RETRIEVE shows the tables Atrium would use for a question, and how they join:
RETRIEVE $question;

-- Users rarely repeat the schema's words. Question words the tables do not carry are
-- scored as the tables' words they stand for ("clients" as customers): reason vocabulary.
RETRIEVE Which clients placed the most purchases?;

-- A question in natural language. Without an LLM endpoint (DEMO_SERVE_FLAGS="--llm-url ...")
-- the answer is an error that says so and shows what RETRIEVE found.
/* nl: Which products have the most reviews? */;
SQL
	local taught_script=$RUN_DIR/demo-session-taught.sql
	cat >"$taught_script" <<SQL
-- A DBA taught Atrium the first question with \`atrium examples add\` (just above): asked again,
-- Atrium runs the example's SQL, checked and run with this session's privileges,
-- without asking an LLM.
/* nl: $question */;

-- Feedback on the session's last answer; a good one becomes a candidate example.
/* nl-feedback: good */;

-- A follow-up continues the previous question: its tables stay in play.
RETRIEVE and only the gold tier ones?;

-- The glossary: DBAs define business terms with SQL (ordinary SQL, passed through).
INSERT INTO atrium.glossary (term, definition, sql_fragment, tables)
VALUES ('net revenue', 'Order line quantity times unit price minus its discount, for orders that were not cancelled',
        'sum(oi.quantity * oi.unit_price - oi.discount_amount) FILTER (WHERE o.status <> ''cancelled'')',
        '{shop.orders,shop.order_items}')
ON CONFLICT ((lower(btrim(term)))) DO NOTHING;

-- A new question that names the term retrieves the term's tables (reason glossary).
RETRIEVE What was our net revenue in June 2025?;
SQL
	echo
	echo "================ psql \"$CLIENT_DSN\" ================"
	psql -X -w -a -v ON_ERROR_STOP=1 -P pager=off "$CLIENT_DSN" -f "$script"
	if [ -s "$nl_script" ]; then
		echo
		psql -X -w -a -P pager=off "$CLIENT_DSN" -f "$nl_script" || true
	fi
	echo
	add_demo_example
	if [ -s "$taught_script" ]; then
		echo
		psql -X -w -a -P pager=off "$CLIENT_DSN" -f "$taught_script" || true
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
