#!/usr/bin/env bash
# pgx conformance: runs the test suite of the pgx version in go.mod twice,
# once directly against PostgreSQL and once through an Atrium instance in
# front of the same server, and fails if any test fails (or does not run)
# only through Atrium. Tests that fail or skip in both runs are listed but
# are not failures: they say something about this server, not about Atrium.
#
# `make test` runs it after the Go tests (deploy/test.sh). It needs Go,
# psql, jq and openssl, and PostgreSQL at PG_HOST:PG_PORT (127.0.0.1:5432)
# with a superuser PG_USER (postgres). It creates a throwaway database (and,
# idempotently, the role pgx's aclitem test names) and drops the database
# at the end.
#
#   test/pgx-conformance.sh                 whole suite
#   PGX_CONFORMANCE_RUN=TestConnect test/pgx-conformance.sh    go test -run
#   PGX_CONFORMANCE_KEEP=1                  keep the work directory
#
# pgx's CONTRIBUTING.md ("Using an existing PostgreSQL cluster") and
# testsetup/postgresql_setup.sql describe the database the suite expects.
set -euo pipefail
# shellcheck source=deploy/lib.sh
source "$(dirname "$0")/../deploy/lib.sh"
LOG_PREFIX="pgx-conformance"
cd "$ATRIUM_ROOT"

for cmd in go psql jq openssl; do
	command -v "$cmd" >/dev/null || die "$cmd is required"
done

start=$SECONDS
work=$(mktemp -d /tmp/atrium-pgx-conformance.XXXXXX)
db="atrium_pgx_conformance_$$"
admin=(psql -X -q -v ON_ERROR_STOP=1 -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER")
atrium_pid=""
cleanup() {
	if [ -n "$atrium_pid" ]; then
		kill "$atrium_pid" 2>/dev/null || true
		wait "$atrium_pid" 2>/dev/null || true
	fi
	"${admin[@]}" -d postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
	if [ -z "${PGX_CONFORMANCE_KEEP:-}" ]; then
		chmod -R u+w "$work" 2>/dev/null || true
		rm -rf "$work"
	else
		log "work directory kept: $work"
	fi
}
trap cleanup EXIT

# The pgx source of the version Atrium builds with, copied out of the
# read-only module cache; its own go.mod pins its test dependencies.
read -r pgx_version pgx_dir < <(go list -m -f '{{.Version}} {{.Dir}}' github.com/jackc/pgx/v5)
if [ -z "$pgx_dir" ] || [ ! -d "$pgx_dir" ]; then
	go mod download github.com/jackc/pgx/v5
	read -r pgx_version pgx_dir < <(go list -m -f '{{.Version}} {{.Dir}}' github.com/jackc/pgx/v5)
fi
log "pgx $pgx_version from $pgx_dir"
cp -r "$pgx_dir" "$work/pgx"
chmod -R u+w "$work/pgx"

# The database pgx's suite expects (testsetup/postgresql_setup.sql): hstore,
# ltree, the uint64 domain, and the "tricky" role its aclitem test grants
# to (roles are cluster-wide, so it is created only if missing, and kept).
log "creating database $db"
"${admin[@]}" -d postgres -c "CREATE DATABASE $db"
"${admin[@]}" -d "$db" <<'SQL'
CREATE EXTENSION IF NOT EXISTS hstore;
CREATE EXTENSION IF NOT EXISTS ltree;
CREATE DOMAIN uint64 AS numeric(20,0);
SELECT format('CREATE ROLE %I SUPERUSER', ' tricky, '' } " \ test user ')
WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = ' tricky, '' } " \ test user ') \gexec
SQL

# Atrium on a free loopback port, with a self-signed certificate so that
# pgx's TLS tests run through it too (TLS on both legs: they check
# pg_stat_ssl, the upstream leg's view).
log "building atrium"
CGO_ENABLED=1 go build -o "$work/atrium" ./cmd/atrium
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost \
	-keyout "$work/atrium.key" -out "$work/atrium.crt" >/dev/null 2>&1
"$work/atrium" serve --listen 127.0.0.1:0 --admin-listen "" --upstream "$PG_HOST:$PG_PORT" \
	--tls-cert "$work/atrium.crt" --tls-key "$work/atrium.key" \
	--log-format json --log-level info >"$work/atrium.log" 2>&1 &
atrium_pid=$!
atrium_addr=""
for _ in $(seq 1 300); do
	atrium_addr=$(jq -r 'select(.msg == "atrium listening") | .listen' "$work/atrium.log" 2>/dev/null | head -n1)
	[ -n "$atrium_addr" ] && break
	kill -0 "$atrium_pid" 2>/dev/null || { cat "$work/atrium.log" >&2; die "atrium exited"; }
	sleep 0.1
done
[ -n "$atrium_addr" ] || die "atrium did not report its address (log: $work/atrium.log)"
log "atrium listening on $atrium_addr"

# run NAME HOST PORT [GO TEST ARGS...]: the suite (default ./...) with
# PGX_TEST_* pointing at HOST:PORT; the results go to $work/NAME.results.
# The server trusts local connections, so the password-method variables
# (MD5, SCRAM, plain) are left unset: they would not test what they name.
run() {
	local name=$1 host=$2 port=$3
	shift 3
	local conn="host=$host port=$port user=$PG_USER dbname=$db"
	local args=(-count=1 -json -timeout 30m)
	if [ $# -eq 0 ]; then
		if [ -n "${PGX_CONFORMANCE_RUN:-}" ]; then
			args+=(-run "$PGX_CONFORMANCE_RUN")
		fi
		set -- ./...
	fi
	log "go test $* $name ($host:$port)"
	local t0=$SECONDS
	(cd "$work/pgx" && env -u PGHOST -u PGPORT -u PGUSER -u PGDATABASE -u PGPASSWORD \
		PGX_TEST_DATABASE="$conn sslmode=disable" \
		PGX_TEST_TCP_CONN_STRING="$conn sslmode=disable" \
		PGX_TEST_TLS_CONN_STRING="$conn sslmode=require channel_binding=disable" \
		GOFLAGS=-mod=mod nice go test "${args[@]}" "$@" >"$work/$name.json" 2>"$work/$name.stderr") || true
	# One line per test or subtest: "RESULT package test", the last word
	# go test said about it; a package that failed without naming a test
	# (build failure, panic, timeout) is "fail package -". Long digit runs
	# (t.TempDir paths in subtest names) differ between runs: normalised.
	jq -r 'select(.Action == "pass" or .Action == "fail" or .Action == "skip")
		| "\(.Action) \(.Package) \((.Test // "-") | gsub("[0-9]{6,}"; "N"))"' "$work/$name.json" |
		sort -k2,3 -u >"$work/$name.results"
	log "$name: $(wc -l <"$work/$name.results") results in $((SECONDS - t0))s"
}
run direct "$PG_HOST" "$PG_PORT"
run atrium "${atrium_addr%:*}" "${atrium_addr##*:}"

# Compare. A test counts against Atrium if it passed directly and did not
# pass through Atrium (failed, or never reported because its package died).
results() { awk -v r="$2" '$1 == r { print $2 " " $3 }' "$work/$1.results" | sort; }
comm -23 <(results direct pass | grep -v ' -$') <(results atrium pass) >"$work/regressions" || true
# A package that passed directly but not through Atrium, with no test to
# blame (a panic or a timeout kills the package's remaining tests).
comm -23 <(results direct pass | grep ' -$') <(results atrium pass) |
	while read -r pkg _; do
		grep -q "^$pkg " "$work/regressions" || echo "$pkg -"
	done >>"$work/regressions"
# A loaded machine makes some of pgx's tests flaky (timing, connection
# limits), in either run. A test that failed only through Atrium is run
# again through Atrium, twice at most, alone with its package; it counts
# only if it never passes.
flaky=""
for attempt in 1 2; do
	[ -s "$work/regressions" ] || break
	grep -v ' -$' "$work/regressions" >"$work/retry.list" || true
	[ -s "$work/retry.list" ] || break
	while read -r pkg; do
		tests=$(awk -v p="$pkg" '$1 == p { sub(/\/.*/, "", $2); print $2 }' "$work/retry.list" | sort -u | paste -sd'|')
		run "retry$attempt" "${atrium_addr%:*}" "${atrium_addr##*:}" -run "^($tests)\$" "$pkg"
		awk '$1 == "pass" && $3 != "-" && $3 !~ /\// { print $2 " " $3 }' "$work/retry$attempt.results" >>"$work/retry.passed"
	done < <(awk '{ print $1 }' "$work/retry.list" | sort -u)
	# Drop every regression (subtests too) whose top-level test now passed.
	if [ -s "$work/retry.passed" ]; then
		awk 'NR == FNR { ok[$1 " " $2] = 1; next } { top = $2; sub(/\/.*/, "", top) } !((($1 " " top) in ok)) { print; next } { print > "/dev/stderr" }' \
			"$work/retry.passed" "$work/regressions" >"$work/regressions.new" 2>>"$work/flaky"
		mv "$work/regressions.new" "$work/regressions"
	fi
done
[ -s "$work/flaky" ] && flaky=$(cat "$work/flaky")
both_fail=$(comm -12 <(results direct fail) <(results atrium fail))
direct_only_fail=$(comm -23 <(results direct fail) <(results atrium fail))
both_skip=$(comm -12 <(results direct skip) <(results atrium skip))
top() { awk '$3 !~ /\//' "$work/$1.results" | awk -v r="$2" '$1 == r && $3 != "-"' | wc -l; }

echo
echo "==================== pgx $pgx_version conformance ===================="
for name in direct atrium; do
	printf '%-7s %5d tests passed, %d failed, %d skipped (top-level; %d with subtests)\n' "$name:" \
		"$(top "$name" pass)" "$(top "$name" fail)" "$(top "$name" skip)" "$(grep -vc ' -$' "$work/$name.results")"
done
if [ -n "$both_fail" ]; then
	echo "failed in both runs (not Atrium's):"
	sed 's/^/  /' <<<"$both_fail"
fi
if [ -n "$direct_only_fail" ]; then
	echo "failed only directly (flaky here; passed through Atrium):"
	sed 's/^/  /' <<<"$direct_only_fail"
fi
if [ -n "$both_skip" ]; then
	echo "skipped in both runs: $(wc -l <<<"$both_skip") (e.g. auth methods this server does not use)"
fi
if [ -n "$flaky" ]; then
	echo "failed only through Atrium at first, passed when run again (flaky here):"
	sed 's/^/  /' <<<"$flaky"
	# What the first failures said, so that a flaky test leaves evidence.
	head -n 3 <<<"$flaky" | while read -r pkg test; do
		[ "$test" = "-" ] && continue
		echo "---- $pkg $test (first run through Atrium)"
		jq -r --arg p "$pkg" --arg t "$test" 'select(.Package == $p and .Test == $t and .Action == "output") | .Output' \
			"$work/atrium.json" | tail -n 15
	done
fi
echo "time: $((SECONDS - start))s"
if [ -s "$work/regressions" ]; then
	echo "FAILED only through Atrium ($(wc -l <"$work/regressions")):"
	sed 's/^/  /' "$work/regressions"
	# The output of each such test, through Atrium, for the log.
	while read -r pkg test; do
		[ "$test" = "-" ] && continue
		echo "---- $pkg $test (through Atrium)"
		jq -r --arg p "$pkg" --arg t "$test" 'select(.Package == $p and .Test == $t and .Action == "output") | .Output' \
			"$work/atrium.json" | tail -n 30
	done <"$work/regressions"
	grep -v '"level":"INFO"' "$work/atrium.log" | tail -n 20 || true
	echo "conformance: $(top atrium pass) passed, $(wc -l <"$work/regressions") failed, $(top atrium skip) skipped"
	exit 1
fi
echo "no test fails only through Atrium"
# The closing line counts pgx's top-level tests through Atrium; "failed"
# are those that fail only through Atrium.
echo "conformance: $(top atrium pass) passed, 0 failed, $(top atrium skip) skipped"
