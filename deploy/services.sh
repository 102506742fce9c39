#!/usr/bin/env bash
# Starts, stops or reports the services Atrium's tests and demo use:
# PostgreSQL (with pgvector) on $PG_HOST:$PG_PORT and Redis on
# $REDIS_HOST:$REDIS_PORT.
#
#   deploy/services.sh start    start what does not answer yet, reuse what does
#   deploy/services.sh stop     stop only what this script started
#   deploy/services.sh status   report both
#
# A service that already answered when `start` ran is the machine's, not ours:
# `stop` leaves it alone. What `start` started is recorded in .run/started/.
# There is no systemd in the containers this runs in, so PostgreSQL is driven
# with pg_ctlcluster and Redis runs daemonised directly.
set -euo pipefail
# shellcheck source=deploy/lib.sh
source "$(dirname "$0")/lib.sh"
LOG_PREFIX=services

pg_trust_ok() {
	psql_admin -d postgres -Atqc 'SELECT 1' >/dev/null 2>&1
}

# ensure_trust gives a cluster our install created trust authentication for
# loopback TCP, which the tests and the demo use (user postgres, no
# password). A cluster the machine already had is never edited.
ensure_trust() {
	pg_trust_ok && return 0
	local hba
	hba=$(pg_conftool -s "$PG_MAJOR" "$PG_CLUSTER" show hba_file 2>/dev/null || echo "/etc/postgresql/$PG_MAJOR/$PG_CLUSTER/pg_hba.conf")
	if [ ! -f "$PG_CREATED_MARKER" ]; then
		die "PostgreSQL on $PG_HOST:$PG_PORT refuses passwordless login as $PG_USER over TCP, and the cluster was not created by deploy/install.sh, so it is left unchanged.
  Either allow it (add 'host all $PG_USER 127.0.0.1/32 trust' at the top of $hba and reload),
  or point the tests at a server you can use: ATRIUM_TEST_PG=postgres://user:password@host:port/postgres"
	fi
	if ! grep -q '^# atrium: trust on loopback' "$hba"; then
		local tmp
		tmp=$(mktemp)
		{
			echo '# atrium: trust on loopback (added by deploy/services.sh to a cluster deploy/install.sh created)'
			echo 'host    all             all             127.0.0.1/32            trust'
			echo 'host    all             all             ::1/128                 trust'
			cat "$hba"
		} >"$tmp"
		cat "$tmp" >"$hba"
		rm -f "$tmp"
		log "added loopback trust authentication to $hba (cluster created by our install)"
	fi
	pg_ctlcluster --skip-systemctl-redirect "$PG_MAJOR" "$PG_CLUSTER" reload
	wait_for 10 "trust authentication" pg_trust_ok || die "loopback trust authentication still fails after reloading; see $hba"
}

ensure_extensions() {
	# Try, then roll back: proves the extensions are installed and loadable
	# without leaving anything behind in the maintenance database.
	local out
	if ! out=$(psql_admin -d postgres -Atq 2>&1 <<-'SQL'
		BEGIN;
		CREATE EXTENSION IF NOT EXISTS vector;
		CREATE EXTENSION IF NOT EXISTS pg_trgm;
		SELECT extversion FROM pg_extension WHERE extname = 'vector';
		ROLLBACK;
	SQL
	); then
		die "CREATE EXTENSION vector failed on $PG_HOST:$PG_PORT: $out (run deploy/install.sh on the server's machine)"
	fi
	log "PostgreSQL: CREATE EXTENSION vector works (pgvector $(echo "$out" | tail -n1))"
}

start_pg() {
	mkdir -p "$STARTED_DIR"
	if pg_accepting; then
		log "PostgreSQL: already running on $PG_HOST:$PG_PORT (reused)"
	else
		command -v pg_ctlcluster >/dev/null || die "pg_ctlcluster not found; run deploy/install.sh first"
		log "PostgreSQL: starting cluster $PG_MAJOR/$PG_CLUSTER"
		pg_ctlcluster --skip-systemctl-redirect "$PG_MAJOR" "$PG_CLUSTER" start ||
			die "pg_ctlcluster $PG_MAJOR $PG_CLUSTER start failed; see /var/log/postgresql/postgresql-$PG_MAJOR-$PG_CLUSTER.log"
		wait_for 60 "PostgreSQL on $PG_HOST:$PG_PORT" pg_accepting ||
			die "PostgreSQL started but does not accept connections on $PG_HOST:$PG_PORT (check the cluster's port and listen_addresses)"
		echo "$PG_MAJOR $PG_CLUSTER" >"$STARTED_DIR/postgresql"
	fi
	ensure_trust
	ensure_extensions
}

start_redis() {
	mkdir -p "$STARTED_DIR"
	if redis_answering; then
		log "Redis: already running on $REDIS_HOST:$REDIS_PORT (reused)"
		return 0
	fi
	command -v redis-server >/dev/null || die "redis-server not found; run deploy/install.sh first"
	local dir=$RUN_DIR/redis
	mkdir -p "$dir"
	log "Redis: starting on $REDIS_HOST:$REDIS_PORT"
	# Nothing is persisted: Redis is only a cache for Atrium.
	redis-server --daemonize yes --bind "$REDIS_HOST" -::1 --port "$REDIS_PORT" \
		--save "" --appendonly no --dir "$dir" --logfile "$dir/redis.log" \
		--pidfile "$dir/redis.pid" ||
		die "redis-server failed to start; see $dir/redis.log"
	wait_for 30 "Redis on $REDIS_HOST:$REDIS_PORT" redis_answering || die "Redis does not answer PING; see $dir/redis.log"
	echo "$dir/redis.pid" >"$STARTED_DIR/redis"
}

stop_pg() {
	if [ -f "$STARTED_DIR/postgresql" ]; then
		log "PostgreSQL: stopping cluster $PG_MAJOR/$PG_CLUSTER (started by services.sh)"
		pg_ctlcluster --skip-systemctl-redirect "$PG_MAJOR" "$PG_CLUSTER" stop -m fast || warn "pg_ctlcluster stop failed"
		rm -f "$STARTED_DIR/postgresql"
	else
		log "PostgreSQL: not started by us; left running"
	fi
}

stop_redis() {
	if [ -f "$STARTED_DIR/redis" ]; then
		log "Redis: stopping (started by services.sh)"
		stop_pidfile "$(cat "$STARTED_DIR/redis")" 15
		rm -f "$STARTED_DIR/redis"
	else
		log "Redis: not started by us; left running"
	fi
}

status() {
	local who
	who="the machine's"
	[ -f "$STARTED_DIR/postgresql" ] && who="started by services.sh"
	if pg_accepting; then
		log "PostgreSQL: running on $PG_HOST:$PG_PORT ($who)"
	else
		log "PostgreSQL: not answering on $PG_HOST:$PG_PORT"
	fi
	who="the machine's"
	[ -f "$STARTED_DIR/redis" ] && who="started by services.sh"
	if redis_answering; then
		log "Redis: running on $REDIS_HOST:$REDIS_PORT ($who)"
	else
		log "Redis: not answering on $REDIS_HOST:$REDIS_PORT"
	fi
}

case ${1:-} in
start)
	start_pg
	start_redis
	;;
stop)
	stop_redis
	stop_pg
	;;
status) status ;;
*)
	echo "usage: $0 start|stop|status" >&2
	exit 2
	;;
esac
