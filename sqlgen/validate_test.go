package sqlgen

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/test/testdb"
)

func TestCheck(t *testing.T) {
	ok := []struct{ sql, text string }{
		{"SELECT 1", "SELECT 1"},
		{"SELECT 1;", "SELECT 1"},
		{"  select a from t where b = 'x;y' ;  ", "select a from t where b = 'x;y'"},
		{"WITH x AS (SELECT 1 AS a) SELECT a FROM x", ""},
		{"VALUES (1), (2)", ""},
		{"SELECT 1 UNION ALL SELECT 2", ""},
		{"SELECT * FROM s.t JOIN u ON true -- trailing comment", ""},
		{"SELECT pg_sleep(1)", ""},
	}
	for _, tt := range ok {
		c, err := Check(tt.sql)
		require.NoError(t, err, tt.sql)
		if tt.text != "" {
			require.Equal(t, tt.text, c.SQL)
		}
	}
	c, err := Check(`WITH x AS (SELECT 1) SELECT * FROM x, "Shop".orders o, public.t, (SELECT * FROM s.u) q WHERE EXISTS (SELECT 1 FROM s.v)`)
	require.NoError(t, err)
	require.Equal(t, []string{`"Shop"."orders"`, `"public"."t"`, `"s"."u"`, `"s"."v"`}, c.Relations)

	bad := []struct{ sql, code string }{
		{"", CodeSyntax},
		{"SELEC 1", CodeSyntax},
		{"SELECT 1; SELECT 2", CodeNotReadOnly},
		{"INSERT INTO t VALUES (1)", CodeNotReadOnly},
		{"UPDATE t SET a = 1", CodeNotReadOnly},
		{"DELETE FROM t", CodeNotReadOnly},
		{"MERGE INTO t USING u ON t.a = u.a WHEN MATCHED THEN DELETE", CodeNotReadOnly},
		{"DROP TABLE t", CodeNotReadOnly},
		{"CREATE TABLE t (a int)", CodeNotReadOnly},
		{"TRUNCATE t", CodeNotReadOnly},
		{"SET search_path = x", CodeNotReadOnly},
		{"COPY t TO STDOUT", CodeNotReadOnly},
		{"BEGIN", CodeNotReadOnly},
		{"COMMIT", CodeNotReadOnly},
		{"EXPLAIN ANALYZE DELETE FROM t", CodeNotReadOnly},
		{"SELECT * FROM t FOR UPDATE", CodeNotReadOnly},
		{"SELECT * FROM (SELECT * FROM t FOR SHARE) x", CodeNotReadOnly},
		{"SELECT * INTO newt FROM t", CodeNotReadOnly},
		{"WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d", CodeNotReadOnly},
		{"WITH d AS (INSERT INTO t VALUES (1) RETURNING *) SELECT 1", CodeNotReadOnly},
		{"SELECT set_config('search_path', 'x', false)", CodeNotReadOnly},
		{"SELECT pg_catalog.pg_advisory_lock(1)", CodeNotReadOnly},
		{"SELECT lo_unlink(1)", CodeNotReadOnly},
		{"SELECT * FROM dblink('x', 'y') AS t(a int)", CodeNotReadOnly},
		{"SELECT pg_terminate_backend(1)", CodeNotReadOnly},
	}
	for _, tt := range bad {
		_, err := Check(tt.sql)
		requireCode(t, err, tt.code)
	}
}

func TestExtractSQL(t *testing.T) {
	for in, want := range map[string]string{
		"SELECT 1":              "SELECT 1",
		"```sql\nSELECT 1\n```": "SELECT 1",
		"Here you go:\n```SQL\nSELECT 1;\n```\nDone.": "SELECT 1;",
		"```\nSELECT 2\n```":                          "SELECT 2",
		"```python\nx=1\n```\n```sql\nSELECT 3\n```":  "SELECT 3",
		"```sql\nSELECT 4 FROM t\nWHERE a = 1":        "SELECT 4 FROM t\nWHERE a = 1",
		"  \n```postgresql\nSELECT 5\n```  ":          "SELECT 5",
	} {
		require.Equal(t, want, ExtractSQL(in), in)
	}
}

func TestPromptQuoting(t *testing.T) {
	p := BuildPrompt("who ordered?", &Retrieval{Tables: []Table{{Schema: "Sales", Name: "order", Columns: []Column{{Name: "user", Type: "text"}, {Name: "Amount", Type: "numeric"}}}},
		Values: []ValueMatch{{Schema: "s", Table: "t", Column: "c", Value: "O'Hara"}}})
	u := p.Messages[1].Content
	require.Contains(t, u, `CREATE TABLE "Sales"."order" (`)
	require.Contains(t, u, `  "user" text,`)
	require.Contains(t, u, `  "Amount" numeric`)
	require.Contains(t, u, `s.t.c = 'O''Hara'`)
	require.Positive(t, p.EstTokens)
}

// TestScopeReadOnlyInsideTransaction checks the savepoint scope really
// makes a client's read-write transaction read-only, and gives it back.
func TestScopeReadOnlyInsideTransaction(t *testing.T) {
	dsn := testdb.New(t)
	up := connectUpstream(t, dsn)
	ctx := context.Background()
	_, err := up.Query(ctx, "CREATE TABLE t (a int); BEGIN; INSERT INTO t VALUES (1)")
	require.NoError(t, err)
	sc, err := openScope(ctx, up, 0)
	require.NoError(t, err)
	_, err = sc.query(ctx, "INSERT INTO t VALUES (2)")
	requireCode(t, err, "25006")
	res, err := sc.query(ctx, "SELECT count(*) FROM t")
	require.NoError(t, err, "the scope resets after a failed statement")
	require.Equal(t, "1", string(res.Rows[0][0]))
	require.NoError(t, sc.close(ctx))
	_, err = up.Query(ctx, "INSERT INTO t VALUES (3); COMMIT")
	require.NoError(t, err)
	res, err = up.Query(ctx, "SELECT string_agg(a::text, ',' ORDER BY a) FROM t")
	require.NoError(t, err)
	require.Equal(t, "1,3", string(res.Rows[0][0]))

	// Idle client: BEGIN READ ONLY ... ROLLBACK.
	sc, err = openScope(ctx, up, 0)
	require.NoError(t, err)
	_, err = sc.query(ctx, "DELETE FROM t")
	requireCode(t, err, "25006")
	require.NoError(t, sc.close(ctx))
	require.Equal(t, byte('I'), up.TxStatus())
}
