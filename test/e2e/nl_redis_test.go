package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/proxy/resultcache"
	"github.com/atriumdb/atrium/test/testdb"
)

func customerNames(t *testing.T, e *nlEnv) []string {
	t.Helper()
	c := e.connect(t)
	rows, err := c.Query(context.Background(), "/* nl: customer names */")
	require.NoError(t, err)
	var names []string
	for rows.Next() {
		var n string
		require.NoError(t, rows.Scan(&n))
		names = append(names, n)
	}
	require.NoError(t, rows.Err())
	return names
}

// TestNLRedisCache uses the shared Redis: a hit, expiry of the rows with the
// SQL tier still answering, and invalidation by a catalog change.
func TestNLRedisCache(t *testing.T) {
	client, err := resultcache.OpenRedis(testdb.RedisURL())
	require.NoError(t, err)
	require.NoError(t, client.Ping(context.Background()).Err(), "Redis at %s", testdb.RedisURL())
	e := startNL(t, nlOpts{store: resultcache.NewRedis(client), cacheCfg: resultcache.Config{TTL: time.Second, SQLTTL: time.Hour}})
	want := []string{"Ann", "Bob", "Cy"}
	outcome := func(o string) float64 {
		return e.metric(t, "atrium_nl_questions_total", map[string]string{"outcome": o})
	}

	require.Equal(t, want, customerNames(t, e))
	require.Equal(t, 1, e.llm.Calls())
	require.Equal(t, want, customerNames(t, e))
	require.Equal(t, 1, e.llm.Calls())
	require.Equal(t, 1.0, outcome("result_cache"))

	// The rows expire (TTL 1s); the SQL tier answers without the LLM.
	_, err = e.admin.Exec(context.Background(), "INSERT INTO shop.customers VALUES (4, 'Dee', 'Chile')")
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		return len(customerNames(t, e)) == 4
	}, 30*time.Second, 200*time.Millisecond)
	require.Equal(t, 1, e.llm.Calls())
	require.GreaterOrEqual(t, outcome("sql_cache"), 1.0)

	// A catalog change invalidates everything cached before it.
	_, err = e.admin.Exec(context.Background(), "UPDATE atrium.catalog_state SET version = version + 1")
	require.NoError(t, err)
	require.Len(t, customerNames(t, e), 4)
	require.Equal(t, 2, e.llm.Calls())
}

// TestNLRedisKilled kills the cache's Redis mid-test: questions keep being
// answered, uncached, and the failure is counted.
func TestNLRedisKilled(t *testing.T) {
	addr, stop := testdb.StartRedis(t)
	client, err := resultcache.OpenRedis("redis://" + addr + "/0?dial_timeout=500ms&max_retries=0")
	require.NoError(t, err)
	e := startNL(t, nlOpts{store: resultcache.NewRedis(client)})
	want := []string{"Ann", "Bob", "Cy"}
	require.Equal(t, want, customerNames(t, e))
	require.Equal(t, want, customerNames(t, e))
	require.Equal(t, 1, e.llm.Calls())

	stop()
	for range 3 {
		require.Equal(t, want, customerNames(t, e))
	}
	require.Greater(t, e.metric(t, "atrium_cache_errors_total", nil), 0.0)
	require.Equal(t, 4, e.llm.Calls(), "without a cache every question is generated again")
}
