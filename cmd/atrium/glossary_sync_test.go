package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/test/llmfake"
	"github.com/atriumdb/atrium/test/testdb"
)

// TestCatalogSyncProposesGlossary checks the CLI's wiring: with --llm-url
// the sync proposes terms from comments, and --propose-glossary=false
// stops it. (What is kept of a reply is tested in catalog.)
func TestCatalogSyncProposesGlossary(t *testing.T) {
	ctx := context.Background()
	// The describe call gets this reply too and finds no description in
	// it; the glossary call finds its entry.
	llm := llmfake.Start(llmfake.Rule{Raw: `{"glossary": [{"term": "loyal customer", "definition": "bought more than ten times"}]}`})
	t.Cleanup(llm.Close)
	for _, propose := range []bool{true, false} {
		dsn := testdb.New(t)
		conn, err := pgx.Connect(ctx, dsn)
		require.NoError(t, err)
		_, err = conn.Exec(ctx, `CREATE TABLE customers (id int PRIMARY KEY, orders int);
			COMMENT ON TABLE customers IS 'A loyal customer bought more than ten times.'`)
		require.NoError(t, err)
		var out bytes.Buffer
		env := &cliEnv{stdout: &out, stderr: &bytes.Buffer{}, getenv: func(string) string { return "" }}
		args := []string{"sync", "--dsn", dsn, "--progress", "never", "--llm-url", llm.URL() + "/v1", "--llm-model", "fake"}
		if !propose {
			args = append(args, "--propose-glossary=false")
		}
		require.NoError(t, runCatalog(ctx, env, args))
		var n int
		require.NoError(t, conn.QueryRow(ctx, "SELECT count(*) FROM atrium.glossary WHERE term = 'loyal customer' AND NOT reviewed AND tables = '{public.customers}'").Scan(&n))
		conn.Close(ctx)
		if propose {
			require.Equal(t, 1, n)
			require.Contains(t, out.String(), "1 glossary terms proposed")
		} else {
			require.Zero(t, n)
			require.NotContains(t, out.String(), "glossary")
		}
	}
}
