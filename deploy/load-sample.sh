#!/usr/bin/env bash
# Loads the bundled sample database (deploy/sample/*.sql) into $SAMPLE_DB
# (default atrium_demo) on $PG_HOST:$PG_PORT.
#
# Idempotent: the database carries the checksum of the SQL it was built from
# (in its comment); when that matches, nothing is done. Otherwise the data are
# loaded into a fresh database that replaces the old one only once loading has
# succeeded. --force reloads regardless.
set -euo pipefail
# shellcheck source=deploy/lib.sh
source "$(dirname "$0")/lib.sh"
LOG_PREFIX=sample

SAMPLE_DB=${SAMPLE_DB:-atrium_demo}
force=0
[ "${1:-}" = "--force" ] && force=1

files=("$ATRIUM_ROOT"/deploy/sample/[0-9]*.sql)
sum=$(cat "${files[@]}" | sha256sum | cut -c1-16)
marker="Atrium sample database (sample version $sum)"

current=$(psql_admin -d postgres -Atq -v db="$SAMPLE_DB" <<'SQL'
SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = :'db';
SQL
)
if [ "$force" -eq 0 ] && [ "$current" = "$marker" ]; then
	log "$SAMPLE_DB is up to date (sample version $sum)"
	exit 0
fi

staging=${SAMPLE_DB}_loading
log "loading the sample database into $SAMPLE_DB (sample version $sum)"
psql_admin -d postgres -q -v db="$staging" <<'SQL'
SELECT format('DROP DATABASE IF EXISTS %I WITH (FORCE)', :'db') \gexec
SELECT format('CREATE DATABASE %I TEMPLATE template0 ENCODING %L', :'db', 'UTF8') \gexec
SQL
args=()
for f in "${files[@]}"; do args+=(-f "$f"); done
start=$SECONDS
if ! psql_admin -d "$staging" -q --single-transaction "${args[@]}" >/dev/null; then
	psql_admin -d postgres -q -c "DROP DATABASE IF EXISTS \"$staging\"" || true
	die "loading the sample SQL failed (see the error above)"
fi
psql_admin -d postgres -q -v db="$SAMPLE_DB" -v staging="$staging" -v marker="$marker" <<'SQL'
SELECT format('DROP DATABASE IF EXISTS %I WITH (FORCE)', :'db') \gexec
SELECT format('ALTER DATABASE %I RENAME TO %I', :'staging', :'db') \gexec
SELECT format('COMMENT ON DATABASE %I IS %L', :'db', :'marker') \gexec
SQL
counts=$(psql_admin -d "$SAMPLE_DB" -Atq -F ' ' <<'SQL'
SELECT count(*) FILTER (WHERE c.relkind = 'r'), count(*) FILTER (WHERE c.relkind IN ('v', 'm')),
       coalesce(sum(s.n_live_tup) FILTER (WHERE c.relkind = 'r'), 0)
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
WHERE c.relkind IN ('r', 'v', 'm') AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'atrium')
  AND n.nspname NOT LIKE 'pg\_%';
SQL
)
log "loaded $SAMPLE_DB in $((SECONDS - start))s: $(echo "$counts" | awk '{printf "%d tables, %d views, %d rows", $1, $2, $3}')"
