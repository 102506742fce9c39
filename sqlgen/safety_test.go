package sqlgen

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/proxy"
	"github.com/atriumdb/atrium/test/llmfake"
	"github.com/atriumdb/atrium/test/testdb"
)

// Tests for the promise that a question never writes and has no side effect
// outside its read-only transaction, whatever SQL the LLM answers.

const victimFixture = `
CREATE TABLE public.victim (id int PRIMARY KEY);
INSERT INTO public.victim SELECT generate_series(1, 6);
`

// newRole creates a LOGIN role that is not a superuser, runs grants (with %[1]s
// for the role's name) and drops it when the test ends.
func newRole(t *testing.T, e *env, prefix, grants string) string {
	t.Helper()
	ctx := context.Background()
	role := fmt.Sprintf("%s_%d", prefix, time.Now().UnixNano())
	_, err := e.admin.Exec(ctx, fmt.Sprintf("CREATE ROLE %s LOGIN NOSUPERUSER; "+grants, role))
	require.NoError(t, err)
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), e.dsn)
		if err == nil {
			_, _ = c.Exec(context.Background(), fmt.Sprintf("DROP OWNED BY %s; DROP ROLE %[1]s", role))
			c.Close(context.Background())
		}
	})
	return role
}

func victimIDs(t *testing.T, e *env) string {
	t.Helper()
	var s string
	require.NoError(t, e.admin.QueryRow(context.Background(), "SELECT coalesce(string_agg(id::text, ',' ORDER BY id), '') FROM public.victim").Scan(&s))
	return s
}

func advisoryLocks(t *testing.T, e *env) int {
	t.Helper()
	var n int
	require.NoError(t, e.admin.QueryRow(context.Background(), "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) AND objid BETWEEN 42 AND 99").Scan(&n))
	return n
}

// exploitSQL is one SELECT of two literals to pg_query (standard strings),
// but a server with standard_conforming_strings = off reads a backslash-
// escaped quote, one literal up to the first semicolon, then COMMIT, then
// DELETE, then a comment.
const exploitSQL = `SELECT 'x\', '; COMMIT; DELETE FROM public.victim WHERE id = 6; --' AS a`

// TestStandardConformingStringsOff: generated SQL is read by the server as
// the checker read it, and never split into several statements, so a
// session with standard_conforming_strings = off cannot be made to commit
// and delete, neither on its own nor inside its own transaction; the
// session gets its setting back.
func TestStandardConformingStringsOff(t *testing.T) {
	e := newEnv(t, Config{MaxRepairs: 2}, llmfake.Rule{SQL: exploitSQL})
	ctx := context.Background()
	_, err := e.admin.Exec(ctx, victimFixture)
	require.NoError(t, err)
	role := newRole(t, e, "atrium_scs", "GRANT SELECT, INSERT, DELETE ON public.victim TO %[1]s")
	up := connectUpstream(t, e.dsn+"&user="+role)
	_, err = up.Query(ctx, "SET standard_conforming_strings = off")
	require.NoError(t, err)

	// The server reads the text as pg_query did: one SELECT of two literals.
	c, _, err := ask(t, e.p, up, "/* nl: show the victims */")
	require.NoError(t, err)
	require.Equal(t, [][]string{{`x\`, "; COMMIT; DELETE FROM public.victim WHERE id = 6; --"}}, c.rows)
	require.Equal(t, "1,2,3,4,5,6", victimIDs(t, e), "nothing was deleted")
	require.Equal(t, 1, e.llm.Calls(), "no repair round: the server reads the text as the checker did")
	require.Equal(t, byte('I'), up.TxStatus())
	res, err := up.Query(ctx, "SHOW standard_conforming_strings")
	require.NoError(t, err)
	require.Equal(t, "off", string(res.Rows[0][0]), "the session's own setting is back")

	// Inside the client's transaction: nothing of the client's is committed.
	_, err = up.Query(ctx, "BEGIN; INSERT INTO public.victim VALUES (7)")
	require.NoError(t, err)
	_, _, err = ask(t, e.p, up, "/* nl: show the victims again */")
	require.NoError(t, err)
	require.Equal(t, byte('T'), up.TxStatus(), "the client's transaction is still open")
	res, err = up.Query(ctx, "SHOW standard_conforming_strings")
	require.NoError(t, err)
	require.Equal(t, "off", string(res.Rows[0][0]), "the savepoint gave the setting back")
	_, err = up.Query(ctx, "ROLLBACK")
	require.NoError(t, err)
	require.Equal(t, "1,2,3,4,5,6", victimIDs(t, e), "the client's INSERT was rolled back, nothing deleted")
}

// TestClientEncodingLexing: in a client encoding where a multibyte
// character may end in a backslash byte (SJIS), the server would read the
// LLM's UTF-8 text other than pg_query: here pg_query sees one literal and
// the server a call of pg_advisory_lock. Non-ASCII generated SQL is refused
// in such sessions.
func TestClientEncodingLexing(t *testing.T) {
	// U+00C1 is C3 81 in UTF-8; to SJIS, 81 5C is one character, so the
	// backslash that escapes the quote for pg_query is gone for the server.
	e := newEnv(t, Config{MaxRepairs: -1}, llmfake.Rule{SQL: "SELECT E'\u00c1" + `\', pg_advisory_lock(77) AS b --', 1 AS c`})
	role := newRole(t, e, "atrium_enc", "GRANT USAGE ON SCHEMA shop TO %[1]s")
	up := connectUpstream(t, e.dsn+"&user="+role)
	ctx := context.Background()
	_, err := up.Query(ctx, "SET client_encoding = 'SJIS'")
	require.NoError(t, err)
	_, _, err = ask(t, e.p, up, "/* nl: customers */")
	requireCode(t, err, CodeNotReadOnly)
	require.Contains(t, err.Error(), "non-ASCII")
	requireUsable(t, up, 'I')
	require.Zero(t, advisoryLocks(t, e), "no advisory lock taken")

	// A question prepared under UTF8 and executed after the client switched
	// to SJIS is refused at Execute.
	_, err = up.Query(ctx, "SET client_encoding = 'UTF8'")
	require.NoError(t, err)
	st := statementFor(e.p, proxy.SessionInfo{User: role, TxStatus: 'I'}, "/* nl: customers */")
	_, err = st.Describe(ctx, up)
	require.NoError(t, err)
	_, err = up.Query(ctx, "SET client_encoding = 'SJIS'")
	require.NoError(t, err)
	_, err = st.Execute(ctx, up, &collector{})
	requireCode(t, err, CodeNotReadOnly)
	require.Contains(t, err.Error(), "non-ASCII")
	require.Zero(t, advisoryLocks(t, e), "no advisory lock taken")
}

// TestGeneratedSQLIsOneStatement: the scope sends generated SQL through the
// extended protocol only, so text with two statements is refused by the
// server itself, even past the static check.
func TestGeneratedSQLIsOneStatement(t *testing.T) {
	e := newEnv(t, Config{})
	ctx := context.Background()
	_, err := e.admin.Exec(ctx, victimFixture)
	require.NoError(t, err)
	up := connectUpstream(t, e.dsn)
	_, err = up.Query(ctx, "SET standard_conforming_strings = off")
	require.NoError(t, err)
	sc, err := openScope(ctx, up, 0)
	require.NoError(t, err)
	// Past the static check (as if it had missed the split): the server
	// itself refuses, since a Parse carries one statement.
	const two = "SELECT 1; COMMIT; DELETE FROM public.victim WHERE id = 6"
	err = sc.explain(ctx, two)
	requireCode(t, err, "42601") // cannot insert multiple commands into a prepared statement
	_, err = sc.describe(ctx, two)
	requireCode(t, err, "42601")
	_, _, err = sc.stream(ctx, two, 0, discardRows{})
	requireCode(t, err, "42601")
	_, err = validate(ctx, sc, two)
	requireCode(t, err, CodeNotReadOnly)
	_, err = validate(ctx, sc, "SELECT 1 AS one")
	require.NoError(t, err, "the scope resets after the refused statement")
	require.NoError(t, sc.close(ctx))
	require.Equal(t, "1,2,3,4,5,6", victimIDs(t, e))
	require.Equal(t, byte('I'), up.TxStatus())
}

// TestSideEffectsThroughFunctions: functions that run SQL text, hold
// locks, signal backends, open other connections or touch server files are
// refused (0A000 naming the function) before anything runs, whoever asks.
func TestSideEffectsThroughFunctions(t *testing.T) {
	e := newEnv(t, Config{MaxRepairs: -1})
	ctx := context.Background()
	_, err := e.admin.Exec(ctx, victimFixture+`
CREATE EXTENSION dblink;
CREATE FUNCTION public.purge() RETURNS int VOLATILE LANGUAGE sql AS 'DELETE FROM public.victim WHERE id = 4 RETURNING id';
CREATE FUNCTION public.grab() RETURNS int VOLATILE LANGUAGE sql AS 'SELECT 1 FROM (SELECT pg_advisory_lock(44)) s';
CREATE FUNCTION public.lock_eq(int, int) RETURNS bool VOLATILE LANGUAGE sql AS 'SELECT $1 = $2 FROM (SELECT pg_advisory_lock(45)) s';
CREATE OPERATOR public.=== (LEFTARG = int, RIGHTARG = int, FUNCTION = public.lock_eq);
CREATE FUNCTION public.lock_sum(int, int) RETURNS int VOLATILE LANGUAGE sql AS 'SELECT coalesce($1, 0) + $2 FROM (SELECT pg_advisory_lock(46)) s';
CREATE AGGREGATE public.locksum(int) (SFUNC = public.lock_sum, STYPE = int);
CREATE TYPE public.wrapped AS (v int);
CREATE FUNCTION public.to_wrapped(int) RETURNS public.wrapped VOLATILE LANGUAGE sql AS 'SELECT ROW($1)::public.wrapped FROM (SELECT pg_advisory_lock(47)) s';
CREATE CAST (int AS public.wrapped) WITH FUNCTION public.to_wrapped(int);
CREATE FUNCTION public.lock_row(public.victim) RETURNS int VOLATILE LANGUAGE sql AS 'SELECT $1.id FROM (SELECT pg_advisory_lock(50)) s';
CREATE FUNCTION public.lock_set(int) RETURNS SETOF int VOLATILE LANGUAGE sql AS 'SELECT $1 FROM (SELECT pg_advisory_lock(48)) s';
`)
	require.NoError(t, err)
	role := newRole(t, e, "atrium_fx", "GRANT SELECT, DELETE ON public.victim TO %[1]s; GRANT pg_signal_backend TO %[1]s")
	roleDSN := e.dsn + "&user=" + role

	// Another session of the same role, which that role may terminate.
	other, err := pgx.Connect(ctx, roleDSN+"&application_name=atrium_fx_other")
	require.NoError(t, err)
	t.Cleanup(func() { other.Close(context.Background()) })

	type tc struct {
		name, sql, refused string
		superuser          bool
	}
	tests := []tc{
		{"terminate another session", `SELECT query_to_xml('select pg_terminate_backend(pid) from pg_stat_activity where application_name = ''atrium_fx_other''', true, false, '')`, "query_to_xml()", false},
		{"advisory lock via query_to_xml", `SELECT query_to_xml('select pg_advisory_lock(42)', true, false, '')`, "query_to_xml()", false},
		{"advisory lock via ts_stat", `SELECT * FROM ts_stat('select to_tsvector(''x'') from (select pg_advisory_lock(43)) s')`, "ts_stat()", false},
		{"user function that deletes", `SELECT public.purge()`, "purge()", false},
		{"user function that locks", `SELECT n FROM (SELECT public.grab() AS n) s`, "grab()", false},
		{"user operator", `SELECT id FROM public.victim WHERE id OPERATOR(public.===) 1`, "operator ===", false},
		{"user operator unqualified", `SELECT id FROM public.victim WHERE id === 1`, "operator ===", false},
		{"user aggregate", `SELECT public.locksum(id) FROM public.victim`, "locksum()", false},
		{"user cast", `SELECT (1::public.wrapped).v`, `cast to "public"."wrapped"`, false},
		{"functional notation", `SELECT v.lock_row FROM public.victim v`, "lock_row()", false},
		{"functional notation on an expression", `SELECT (v).lock_row FROM public.victim v`, "lock_row()", false},
		{"temporary schema", `SELECT pg_temp.lock_tmp()`, "lock_tmp()", false},
		{"set-returning function in FROM", `SELECT * FROM public.lock_set(1) AS x`, "lock_set()", false},
		{"dblink_exec", `SELECT dblink_exec('dbname=' || current_database(), 'DELETE FROM public.victim WHERE id = 5')`, "dblink_exec()", true},
		{"dblink_exec via query_to_xml", `SELECT query_to_xml('select dblink_exec(''dbname='' || current_database(), ''DELETE FROM public.victim WHERE id = 5'')', true, false, '')`, "query_to_xml()", true},
		{"nextval", `SELECT nextval('some_seq')`, "nextval()", false},
		{"table_to_xml is STABLE but runs SQL", `SELECT table_to_xml('public.victim', true, false, '')`, "table_to_xml()", false},
	}
	for _, inner := range []string{
		"pg_read_file(''PG_VERSION'')", "pg_ls_dir(''.'')", "pg_reload_conf()", "pg_switch_wal()",
		"pg_stat_reset()", "pg_stat_file(''PG_VERSION'')", "pg_read_binary_file(''PG_VERSION'')",
		"pg_advisory_lock(49)", "pg_stat_reset_shared(''bgwriter'')", "set_config(''work_mem'', ''1MB'', false)",
	} {
		for _, wrap := range []string{"query_to_xml", "query_to_xmlschema", "query_to_xml_and_xmlschema"} {
			tests = append(tests, tc{wrap + " " + inner, fmt.Sprintf("SELECT %s('select %s', true, false, '')", wrap, inner), wrap + "()", true})
		}
		tests = append(tests, tc{"ts_stat " + inner, fmt.Sprintf("SELECT * FROM ts_stat('select to_tsvector(''x'') from (select %s) s')", inner), "ts_stat()", true})
	}
	upRole := connectUpstream(t, roleDSN)
	_, err = upRole.Query(ctx, "CREATE FUNCTION pg_temp.lock_tmp() RETURNS int VOLATILE LANGUAGE sql AS 'SELECT 1 FROM (SELECT pg_advisory_lock(51)) s'")
	require.NoError(t, err)
	upSuper := connectUpstream(t, e.dsn)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := upRole
			if tt.superuser {
				up = upSuper
			}
			q := fmt.Sprintf("side effect %d", i)
			e.llm.SetRules(llmfake.Rule{Question: q, SQL: tt.sql})
			_, _, err := ask(t, e.p, up, "/* nl: "+q+" */")
			requireCode(t, err, CodeNotReadOnly)
			require.Contains(t, err.Error(), "it calls "+tt.refused)
			requireUsable(t, up, 'I')
			require.Equal(t, "1,2,3,4,5,6", victimIDs(t, e), "nothing was deleted")
			require.Zero(t, advisoryLocks(t, e), "no advisory lock outlives the question")
		})
	}
	var one int
	require.NoError(t, other.QueryRow(ctx, "SELECT 1").Scan(&one), "the other session survives")
}

// TestAllowedFunctions: IMMUTABLE and STABLE functions, user-defined ones
// included, and the reviewed harmless VOLATILE ones run; a refused call
// gets a repair round that names the function.
func TestAllowedFunctions(t *testing.T) {
	allowed := `SELECT public.victim_count() AS n, public.twice(21) AS t, random() < 2 AS r, now() IS NOT NULL AS d,
  clock_timestamp() IS NOT NULL AS c, gen_random_uuid() IS NOT NULL AS u, upper('a') || lower('B') AS s,
  (SELECT count(*) FROM generate_series(1, 3)) AS g, 2 BETWEEN 1 AND 3 AS b, CASE 1 WHEN 1 THEN 'one' END AS w,
  (SELECT sum(id) FROM public.victim v1 JOIN public.victim v2 USING (id) WHERE id IN (1, 2)) AS j, 1::text AS x`
	e := newEnv(t, Config{MaxRepairs: 1},
		llmfake.Rule{Question: "allowed", SQL: allowed},
		llmfake.Rule{Question: "repair", Attempt: 1, SQL: `SELECT query_to_xml('select 1', true, false, '')`},
		llmfake.Rule{Question: "repair", Attempt: 2, ErrorContains: "it calls query_to_xml()", SQL: "SELECT public.twice(2) AS t"},
	)
	ctx := context.Background()
	_, err := e.admin.Exec(ctx, victimFixture+`
CREATE FUNCTION public.victim_count() RETURNS bigint STABLE LANGUAGE sql AS 'SELECT count(*) FROM public.victim';
CREATE FUNCTION public.twice(int) RETURNS int IMMUTABLE LANGUAGE sql AS 'SELECT $1 * 2';
`)
	require.NoError(t, err)
	role := newRole(t, e, "atrium_ok", "GRANT SELECT ON public.victim TO %[1]s")
	up := connectUpstream(t, e.dsn+"&user="+role)

	c, _, err := ask(t, e.p, up, "/* nl: allowed functions */")
	require.NoError(t, err)
	require.Equal(t, [][]string{{"6", "42", "t", "t", "t", "t", "Ab", "3", "t", "one", "3", "1"}}, c.rows)

	c, _, err = ask(t, e.p, up, "/* nl: repair me */")
	require.NoError(t, err)
	require.Equal(t, [][]string{{"4"}}, c.rows)
	require.Equal(t, 3, e.llm.Calls())

	// A function redefined as VOLATILE is refused at the next validation,
	// even of SQL that comes from the cache's SQL tier (nl-sql validates it
	// on the session before answering).
	_, err = e.admin.Exec(ctx, "ALTER FUNCTION public.twice(int) VOLATILE")
	require.NoError(t, err)
	_, _, err = ask(t, e.p, up, "/* nl-sql: repair me */")
	requireCode(t, err, CodeNotReadOnly)
	require.Contains(t, err.Error(), "it calls twice()")
	requireUsable(t, up, 'I')
}

// TestCollectCalls covers the parse-tree side of the function check: every
// way a statement can call a function is listed.
func TestCollectCalls(t *testing.T) {
	r, err := collectCalls(`SELECT s.f(1), g(x) OVER (), t.col, (t).fld, 1 + 2, a OPERATOR(s.<=) b, x BETWEEN 1 AND 2, y = ANY (SELECT 1),
	  CASE z WHEN 1 THEN 2 END, v::s.t, w::int[] FROM h() AS hh JOIN u USING (k) ORDER BY a USING ~<~`)
	require.NoError(t, err)
	var funcs, ops, casts []string
	for q := range r.funcs {
		funcs = append(funcs, q.nsp+"."+q.name)
	}
	for q := range r.ops {
		ops = append(ops, q.nsp+"."+q.name)
	}
	for c := range r.casts {
		casts = append(casts, c)
	}
	require.ElementsMatch(t, []string{"s.f", ".g", ".h"}, funcs)
	require.ElementsMatch(t, []string{".+", "s.<=", ".>=", ".<=", ".=", ".~<~"}, ops)
	require.ElementsMatch(t, []string{`"s"."t"`, `"pg_catalog"."int4"`}, casts)
	var attrs []string
	for q := range r.attrs {
		attrs = append(attrs, q.name)
	}
	require.ElementsMatch(t, []string{"col", "fld"}, attrs)
}

// BenchmarkCheckCalls measures the function check of a typical generated
// query (one catalog round trip on a local server), the cost validation
// adds per generated or SQL-cached answer.
func BenchmarkCheckCalls(b *testing.B) {
	dsn := testdb.New(b)
	up := connectUpstream(b, dsn)
	ctx := context.Background()
	_, err := up.Query(ctx, fixture)
	require.NoError(b, err)
	sc, err := openScope(ctx, up, 0)
	require.NoError(b, err)
	defer sc.close(ctx)
	b.Run("check", func(b *testing.B) {
		for b.Loop() {
			if err := checkCalls(ctx, sc, countByCountry); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The EXPLAIN validation ran before, and SELECT 1, for scale.
	b.Run("explain", func(b *testing.B) {
		for b.Loop() {
			if err := sc.explain(ctx, countByCountry); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("select1", func(b *testing.B) {
		for b.Loop() {
			if _, err := sc.query(ctx, "SELECT 1"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
