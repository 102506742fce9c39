# shellcheck shell=bash disable=SC2034  # the settings are used by the scripts that source this
# Shared settings and helpers for the deploy/ scripts. Sourced, never run.
#
# Every setting can be overridden from the environment, so the scripts also
# work against a server that is not the Debian default.

ATRIUM_ROOT=${ATRIUM_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
PG_MAJOR=${PG_MAJOR:-15}
PG_CLUSTER=${PG_CLUSTER:-main}
PG_BINDIR=${PG_BINDIR:-/usr/lib/postgresql/$PG_MAJOR/bin}
PG_HOST=${PG_HOST:-127.0.0.1}
PG_PORT=${PG_PORT:-5432}
PG_USER=${PG_USER:-postgres}
REDIS_HOST=${REDIS_HOST:-127.0.0.1}
REDIS_PORT=${REDIS_PORT:-6379}
PGVECTOR_VERSION=${PGVECTOR_VERSION:-0.8.0}
ONNXRUNTIME_VERSION=${ONNXRUNTIME_VERSION:-1.30.0}

# Project-local state: .deps holds downloaded and built third-party files,
# .run holds pid files, logs and the record of what our scripts started.
DEPS_DIR=$ATRIUM_ROOT/.deps
RUN_DIR=$ATRIUM_ROOT/.run
STARTED_DIR=$RUN_DIR/started
ONNXRUNTIME_LIB=$DEPS_DIR/onnxruntime/lib/libonnxruntime.so

# A cluster our install created (rather than one the machine already had) is
# marked with this file; only then do the scripts edit its pg_hba.conf.
PG_CREATED_MARKER=/etc/postgresql/$PG_MAJOR/$PG_CLUSTER/atrium-created-cluster

export PATH=/usr/local/go/bin:$PATH

# package_probes prints, one a line, a file whose presence means a Debian
# package is installed and the package that ships that very file. install.sh
# installs the package when its file is missing; validate.sh checks with
# `dpkg -S` that each present file really belongs to the package named, so a
# probe can never again be a file that some other package provides (pgxs.mk
# ships in postgresql-client, not in the server headers' package).
# Commands are probed by their real path, not through pg_wrapper or
# update-alternatives links, which no package owns or which belong to another.
package_probes() {
	local arch
	arch=$(dpkg --print-architecture 2>/dev/null || echo amd64)
	cat <<EOT
$PG_BINDIR/postgres postgresql-$PG_MAJOR
$PG_BINDIR/pgbench postgresql-$PG_MAJOR
/usr/bin/pg_ctlcluster postgresql-common
/usr/include/postgresql/$PG_MAJOR/server/postgres.h postgresql-server-dev-$PG_MAJOR
$PG_BINDIR/psql postgresql-client-$PG_MAJOR
/usr/bin/psql postgresql-client-common
/usr/bin/redis-server redis-server
/usr/bin/redis-cli redis-tools
/usr/sbin/pgbouncer pgbouncer
/usr/share/java/postgresql.jar libpostgresql-jdbc-java
/usr/lib/jvm/java-17-openjdk-$arch/bin/javac openjdk-17-jdk-headless
/usr/bin/gcc gcc
/usr/bin/make make
/usr/bin/git git
/usr/bin/jq jq
/usr/sbin/update-ca-certificates ca-certificates
/usr/share/wordnet/data.noun wordnet-base
EOT
}

log() { printf '%s: %s\n' "${LOG_PREFIX:-atrium}" "$*"; }
warn() { printf '%s: warning: %s\n' "${LOG_PREFIX:-atrium}" "$*" >&2; }
die() {
	printf '%s: error: %s\n' "${LOG_PREFIX:-atrium}" "$*" >&2
	exit 1
}

# psql_admin runs psql as the superuser over TCP, the way tests connect.
psql_admin() {
	PGCONNECT_TIMEOUT=5 PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning" psql -X -w -v ON_ERROR_STOP=1 -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" "$@"
}

pg_accepting() {
	pg_isready -q -h "$PG_HOST" -p "$PG_PORT" -t 2 >/dev/null 2>&1
}

redis_answering() {
	[ "$(timeout 3 redis-cli -h "$REDIS_HOST" -p "$REDIS_PORT" ping 2>/dev/null)" = PONG ]
}

# port_open reports whether something accepts TCP connections on host:port.
port_open() {
	timeout 1 bash -c "exec 3<>/dev/tcp/$1/$2" 2>/dev/null
}

# wait_for runs a command until it succeeds or the timeout (seconds) passes.
wait_for() {
	local timeout=$1 what=$2
	shift 2
	local deadline=$((SECONDS + timeout))
	until "$@"; do
		if ((SECONDS >= deadline)); then
			return 1
		fi
		sleep 0.2
	done
	log "$what is ready"
}

# pid_alive reports whether the pid in a pid file is a running process.
pid_alive() {
	local f=$1 pid
	[ -s "$f" ] || return 1
	pid=$(cat "$f")
	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null
}

# stop_pidfile sends SIGTERM to the process in a pid file, waits up to
# $2 seconds, then SIGKILL; removes the pid file.
stop_pidfile() {
	local f=$1 grace=${2:-15} pid
	if ! pid_alive "$f"; then
		rm -f "$f"
		return 0
	fi
	pid=$(cat "$f")
	kill -TERM "$pid" 2>/dev/null || true
	local deadline=$((SECONDS + grace))
	while kill -0 "$pid" 2>/dev/null; do
		if ((SECONDS >= deadline)); then
			warn "pid $pid did not stop within ${grace}s; sending SIGKILL"
			kill -KILL "$pid" 2>/dev/null || true
			break
		fi
		sleep 0.2
	done
	rm -f "$f"
}
