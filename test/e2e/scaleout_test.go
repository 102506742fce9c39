package e2e

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/catalog"
	"github.com/atriumdb/atrium/test/llmfake"
	"github.com/atriumdb/atrium/test/testdb"
)

// sharedRedisURL is the test Redis with a database number of its own, so
// these tests' keys live apart from other tests' (nothing is flushed: the
// cache keys also carry each test's unique database name).
func sharedRedisURL(t *testing.T) string {
	u, err := url.Parse(testdb.RedisURL())
	require.NoError(t, err)
	if u.Scheme == "redis" || u.Scheme == "rediss" {
		u.Path = "/11"
	}
	return u.String()
}

// TestScaleOutTwoInstances runs two `atrium serve` processes side by side
// sharing one Redis and one catalog, as a TCP load balancer would spread
// clients over them: a question answered by one is a cache hit on the
// other, and a catalog sync is seen by both.
func TestScaleOutTwoInstances(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	db := testdb.New(t, "vector", "pg_trgm")
	admin, err := pgx.Connect(ctx, db)
	require.NoError(t, err)
	defer admin.Close(context.Background())
	_, err = admin.Exec(ctx, nlFixture)
	require.NoError(t, err)
	pool, err := pgxpool.New(ctx, db)
	require.NoError(t, err)
	defer pool.Close()
	_, err = catalog.Sync(ctx, pool, catalog.SyncOptions{Embedder: mustDefaultEmbedder(t), AutoMigrate: true, Schemas: []string{"shop"}})
	require.NoError(t, err)

	llm := llmfake.Start(nlRules()...) // the test double of the LLM
	defer llm.Close()
	start := func(name string) *serveProc {
		adminAddr := freeAddr(t)
		return startServe(t, freeAddr(t), adminAddr, nil,
			"--admin-listen", adminAddr, "--instance", name, "--upstream", upstreamAddr(t), "--upstream-sslmode", "disable",
			"--catalog-dsn", db, "--redis", sharedRedisURL(t), "--llm-url", llm.URL(), "--llm-model", "fake",
			"--catalog-version-poll", "100ms")
	}
	a, b := start("atrium-a"), start("atrium-b")

	ask := func(p *serveProc, sql string) [][]any {
		t.Helper()
		c, err := pgx.Connect(ctx, p.dsn(t, db))
		require.NoError(t, err)
		defer c.Close(context.Background())
		rows, err := c.Query(ctx, sql, pgx.QueryExecModeSimpleProtocol)
		require.NoError(t, err)
		var out [][]any
		for rows.Next() {
			v, err := rows.Values()
			require.NoError(t, err)
			out = append(out, v)
		}
		require.NoError(t, rows.Err())
		return out
	}
	const q = "/* nl: orders per country */"

	// One instance generates (one LLM call) and caches in Redis ...
	first := ask(a, q)
	require.Len(t, first, 2)
	require.Equal(t, 1, llm.Calls())
	require.Equal(t, 1.0, a.metric(t, `atrium_nl_questions_total{outcome="generated"}`))

	// ... and the other serves the same rows from the shared cache.
	second := ask(b, q)
	require.Equal(t, first, second)
	require.Equal(t, 1, llm.Calls(), "the second instance must not call the LLM")
	require.Equal(t, 1.0, b.metric(t, `atrium_nl_questions_total{outcome="result_cache"}`))
	require.Equal(t, 0.0, b.metric(t, `atrium_nl_questions_total{outcome="generated"}`))

	// The query log tells the instances apart and records the hit.
	type logRow struct {
		instance, tier string
		hit            bool
	}
	var logged []logRow
	require.Eventually(t, func() bool {
		rows, err := pool.Query(ctx, `SELECT instance, coalesce(cache_tier, ''), cache_hit FROM atrium.query_log WHERE kind = 'nl' ORDER BY logged_at`)
		if err != nil {
			return false
		}
		logged = logged[:0]
		for rows.Next() {
			var r logRow
			if rows.Scan(&r.instance, &r.tier, &r.hit) == nil {
				logged = append(logged, r)
			}
		}
		return rows.Err() == nil && len(logged) == 2
	}, 30*time.Second, 100*time.Millisecond)
	require.Equal(t, []logRow{{"atrium-a", "", false}, {"atrium-b", "result", true}}, logged)

	// A catalog sync (a new table) is seen by both instances' retrieval.
	_, err = admin.Exec(ctx, `CREATE TABLE shop.invoices (id bigint PRIMARY KEY, order_id bigint REFERENCES shop.orders, total numeric(10,2));
		COMMENT ON TABLE shop.invoices IS 'invoices issued for orders'`)
	require.NoError(t, err)
	out := runAtrium(t, nil, "catalog", "sync", "--dsn", db, "--schemas", "shop", "--progress", "never")
	require.Contains(t, out, "catalog version")
	for _, p := range []*serveProc{a, b} {
		found := false
		rows := ask(p, "RETRIEVE invoices issued for orders")
		for _, row := range rows {
			if row[1] == "shop" && row[2] == "invoices" && row[4] == true {
				found = true
			}
		}
		require.True(t, found, "instance %s does not retrieve the new table: %v", p.listen, rows)
	}

	// The sync bumped the catalog version, which is part of every cache
	// key: the cached answer is invalid on both instances. Whichever asks
	// first generates again; the other then hits the new entry.
	require.Eventually(t, func() bool {
		ask(a, q)
		return llm.Calls() == 2
	}, 30*time.Second, 150*time.Millisecond)
	hits := b.metric(t, `atrium_nl_questions_total{outcome="result_cache"}`)
	ask(b, q)
	require.Equal(t, 2, llm.Calls())
	require.Equal(t, hits+1, b.metric(t, `atrium_nl_questions_total{outcome="result_cache"}`))
}
