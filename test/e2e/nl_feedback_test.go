package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/test/llmfake"
)

// TestServeFeedback runs `atrium serve` as operators do, with a catalog,
// Redis, the fake LLM (a test double) and --nl-curator-role, and gives
// feedback from a pgx session: "good" by a curator lands in atrium.feedback
// against the question's query_log row and is promoted at once; "wrong"
// evicts the cached answer, so the next identical question calls the LLM
// again; the feedback's log line carries the judged question's request id.
func TestServeFeedback(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	db, pool := nlCatalogDB(ctx, t)
	llm := llmfake.Start(nlRules()...)
	defer llm.Close()

	adminAddr := freeAddr(t)
	// The test connects as the superuser, a member of every role, so
	// pg_database_owner stands in for a curator role.
	p := startServe(t, freeAddr(t), adminAddr, nil,
		"--admin-listen", adminAddr, "--upstream", upstreamAddr(t), "--upstream-sslmode", "disable",
		"--catalog-dsn", db, "--redis", sharedRedisURL(t), "--llm-url", llm.URL(), "--llm-model", "fake",
		"--nl-curator-role", "pg_database_owner")

	c, err := pgx.Connect(ctx, p.dsn(t, db))
	require.NoError(t, err)
	defer c.Close(context.Background())
	ask := func(sql string) [][]any {
		t.Helper()
		rows, err := c.Query(ctx, sql, pgx.QueryExecModeSimpleProtocol)
		require.NoError(t, err)
		out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([]any, error) { return r.Values() })
		require.NoError(t, err, sql)
		return out
	}
	const q = "/* nl: orders per country */"
	ask(q)
	ask(q)
	require.Equal(t, 1, llm.Calls(), "the second answer is cached")

	good := ask("/* nl-feedback: good */")
	require.Len(t, good, 1)
	require.Equal(t, "good", good[0][1])
	require.Equal(t, true, good[0][2], "candidate")
	require.NotNil(t, good[0][3], "promoted by a curator")
	var question, verdict, logged string
	var exampleID int64
	require.NoError(t, pool.QueryRow(ctx, `SELECT f.question, f.verdict, f.example_id, e.source
  FROM atrium.feedback f JOIN atrium.examples e ON e.id = f.example_id WHERE f.id = $1`, good[0][0]).Scan(&question, &verdict, &exampleID, &logged))
	require.Equal(t, []string{"orders per country", "good", "feedback"}, []string{question, verdict, logged})
	require.Equal(t, good[0][3], exampleID)

	wrong := ask("/* nl-feedback: wrong — amounts must exclude refunds */")
	require.Equal(t, true, wrong[0][4], "evicted")
	// The curator's "wrong" also disables the example promoted from the
	// same answer: otherwise it would serve that answer again, LLM-free.
	var enabled bool
	require.NoError(t, pool.QueryRow(ctx, "SELECT enabled FROM atrium.examples WHERE id = $1", exampleID).Scan(&enabled))
	require.False(t, enabled, "the example behind the wrong answer is disabled")
	ask(q)
	require.Equal(t, 2, llm.Calls(), "the answer marked wrong is generated again")

	// The feedback rows join the question's query_log row.
	require.Eventually(t, func() bool {
		var n int
		err := pool.QueryRow(ctx, "SELECT count(*) FROM atrium.query_log_feedback WHERE query_log_id IS NOT NULL").Scan(&n)
		return err == nil && n == 2
	}, 30*time.Second, 100*time.Millisecond)
	var reqID string
	require.NoError(t, pool.QueryRow(ctx, "SELECT request_id FROM atrium.feedback WHERE id = $1", wrong[0][0]).Scan(&reqID))
	require.Eventually(t, func() bool {
		for _, l := range logLines(p.out.String()) {
			if l["msg"] == "feedback recorded" && l["request_id"] == reqID && l["verdict"] == "wrong" {
				return true
			}
		}
		return false
	}, 10*time.Second, 50*time.Millisecond, p.out.String())

	// A new connection has no question to judge.
	c2, err := pgx.Connect(ctx, p.dsn(t, db))
	require.NoError(t, err)
	defer c2.Close(context.Background())
	_, err = c2.Exec(ctx, "/* nl-feedback: good */", pgx.QueryExecModeSimpleProtocol)
	var pe *pgconn.PgError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "55000", pe.Code)
	require.True(t, strings.Contains(pe.Message, "no question in this session"), pe.Message)
}
