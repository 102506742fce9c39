package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/test/llmfake"
)

// TestNLNoWritesThroughProxy asks hostile questions through the real proxy
// as a role that may write: a session with standard_conforming_strings =
// off (psql), and functions that run SQL text (pgx). Nothing is written,
// no other session is killed, no lock outlives the question.
func TestNLNoWritesThroughProxy(t *testing.T) {
	e := startNL(t, nlOpts{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := e.admin.Exec(ctx, "CREATE TABLE public.victim (id int PRIMARY KEY); INSERT INTO public.victim SELECT generate_series(1, 6)")
	require.NoError(t, err)
	role := e.newRole(t, "GRANT SELECT, INSERT, DELETE ON public.victim TO %[1]s; GRANT SELECT ON ALL TABLES IN SCHEMA shop TO %[1]s")
	e.llm.SetRules(
		// One SELECT of two literals to pg_query; COMMIT and DELETE to a
		// server reading with standard_conforming_strings = off.
		llmfake.Rule{Question: "customer victims", SQL: `SELECT 'x\', '; COMMIT; DELETE FROM public.victim WHERE id = 6; --' AS a`},
		llmfake.Rule{Question: "customer sessions", SQL: `SELECT query_to_xml('select pg_terminate_backend(pid) from pg_stat_activity where application_name = ''atrium_victim''', true, false, '')`},
		llmfake.Rule{Question: "customer locks", SQL: `SELECT * FROM ts_stat('select to_tsvector(''x'') from (select pg_advisory_lock(42)) s')`},
	)
	victims := func() string {
		var s string
		require.NoError(t, e.admin.QueryRow(ctx, "SELECT string_agg(id::text, ',' ORDER BY id) FROM public.victim").Scan(&s))
		return s
	}

	t.Run("standard_conforming_strings off", func(t *testing.T) {
		cmd := psqlCmd(ctx, e.dsn(t, "user", role), "-v", "ON_ERROR_STOP=1", "-At", "-f", "-")
		cmd.Stdin = strings.NewReader(strings.Join([]string{
			"SET standard_conforming_strings = off;",
			"/* nl: customer victims */;",
			"SHOW standard_conforming_strings;",
			"BEGIN;",
			"INSERT INTO public.victim VALUES (7);",
			"/* nl: customer victims */;",
			"ROLLBACK;",
			"SELECT 'done';",
		}, "\n") + "\n")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		s := string(out)
		t.Log(s)
		require.Equal(t, 2, strings.Count(s, "x\\|; COMMIT; DELETE FROM public.victim WHERE id = 6; --\n"), "answered as the checker read it")
		require.Contains(t, s, "\noff\n", "the session's own setting is back")
		require.Contains(t, s, "done")
		require.Equal(t, "1,2,3,4,5,6", victims(), "nothing deleted, the client's INSERT rolled back")
	})

	t.Run("functions that run SQL text", func(t *testing.T) {
		other := e.connect(t, "user", role, "application_name", "atrium_victim")
		c := e.connect(t, "user", role)
		for _, q := range []string{"customer sessions", "customer locks"} {
			_, err := c.Exec(ctx, "/* nl: "+q+" */")
			pe := requireSQLState(t, err, "0A000")
			require.Contains(t, pe.Message, "it calls ")
		}
		var one int
		require.NoError(t, other.QueryRow(ctx, "SELECT 1").Scan(&one), "the other session survives")
		var locks int
		require.NoError(t, e.admin.QueryRow(ctx, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) AND objid BETWEEN 42 AND 99").Scan(&locks))
		require.Zero(t, locks, "no advisory lock outlives the question")
		require.Equal(t, "1,2,3,4,5,6", victims())
	})
}
