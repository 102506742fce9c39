package e2e

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/sqlgen"
)

func requireSQLState(t *testing.T, err error, code string) *pgconn.PgError {
	t.Helper()
	var pe *pgconn.PgError
	require.True(t, errors.As(err, &pe), "want SQLSTATE %s, got %v", code, err)
	require.Equal(t, code, pe.Code, "error: %v", pe)
	return pe
}

func requireAlive(t *testing.T, c *pgx.Conn) {
	t.Helper()
	var one int
	require.NoError(t, c.QueryRow(context.Background(), "SELECT 1").Scan(&one))
	require.Equal(t, byte('I'), c.PgConn().TxStatus())
}

func TestNLPgx(t *testing.T) {
	e := startNL(t, nlOpts{cfg: fastCfg()})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := e.connect(t)
	var notices []string
	var nmu sync.Mutex
	cfg := c.Config().Copy()
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		nmu.Lock()
		notices = append(notices, n.Message)
		nmu.Unlock()
	}
	c2, err := pgx.ConnectConfig(ctx, cfg)
	require.NoError(t, err)
	defer c2.Close(context.Background())

	t.Run("extended protocol", func(t *testing.T) {
		// pgx's default mode prepares (Parse/Describe) and then executes:
		// the row description must be the real one, with real types.
		rows, err := c2.Query(ctx, "/* nl: How many orders per country, and revenue? */")
		require.NoError(t, err)
		fds := rows.FieldDescriptions()
		require.Len(t, fds, 3)
		require.Equal(t, "country", fds[0].Name)
		require.Equal(t, uint32(25), fds[0].DataTypeOID)
		require.Equal(t, uint32(20), fds[1].DataTypeOID)
		require.Equal(t, uint32(1700), fds[2].DataTypeOID)
		type row struct {
			country string
			orders  int64
			revenue float64
		}
		var got []row
		for rows.Next() {
			var r row
			require.NoError(t, rows.Scan(&r.country, &r.orders, &r.revenue))
			got = append(got, r)
		}
		require.NoError(t, rows.Err())
		require.Equal(t, []row{{"Aruba", 20, 3200}, {"Chile", 10, 1450}}, got)
		nmu.Lock()
		require.NotEmpty(t, notices)
		require.Contains(t, notices[0], "shop.")
		require.Contains(t, notices[0], sqlOrdersPerCountry)
		nmu.Unlock()
		requireAlive(t, c2)
	})

	t.Run("simple protocol and cache", func(t *testing.T) {
		calls := e.llm.Calls()
		var names []string
		rows, err := c.Query(ctx, "/* nl: customer names */", pgx.QueryExecModeSimpleProtocol)
		require.NoError(t, err)
		for rows.Next() {
			var n string
			require.NoError(t, rows.Scan(&n))
			names = append(names, n)
		}
		require.NoError(t, rows.Err())
		require.Equal(t, []string{"Ann", "Bob", "Cy"}, names)
		require.Equal(t, calls+1, e.llm.Calls())
		// Again, as a prepared statement: served from the cache.
		var first string
		require.NoError(t, c.QueryRow(ctx, "-- nl: customer names").Scan(&first))
		require.Equal(t, "Ann", first)
		require.Equal(t, calls+1, e.llm.Calls())
		require.Equal(t, 1.0, e.metric(t, "atrium_nl_questions_total", map[string]string{"outcome": "result_cache"}))
	})

	t.Run("nl-sql", func(t *testing.T) {
		var sql string
		require.NoError(t, c.QueryRow(ctx, "/* nl-sql: customer names */").Scan(&sql))
		require.Equal(t, sqlCustomerNames, sql)
	})

	t.Run("bad generations", func(t *testing.T) {
		for q, code := range map[string]string{
			"/* nl: drop the orders */":                                    "0A000",
			"/* nl: two statements about customers */":                     "0A000",
			"/* nl: garbage about customers */":                            "42601",
			"/* nl: customers, in a question no rule of the fake knows */": "58000",
		} {
			_, err := c.Exec(ctx, q)
			requireSQLState(t, err, code)
			requireAlive(t, c)
		}
		var n int
		require.NoError(t, e.admin.QueryRow(ctx, "SELECT count(*) FROM shop.orders").Scan(&n))
		require.Equal(t, 30, n)
	})

	t.Run("statement timeout and cancel", func(t *testing.T) {
		c := e.connect(t)
		qctx, qcancel := context.WithTimeout(ctx, 500*time.Millisecond)
		defer qcancel()
		_, err := c.Exec(qctx, "/* nl: slow customers */")
		require.Error(t, err)
		// pgx closes a connection whose query was interrupted by its
		// context; the server side must have stopped the query.
		require.Eventually(t, func() bool {
			var n int
			_ = e.admin.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep(60)%' AND state = 'active'").Scan(&n)
			return n == 0
		}, 30*time.Second, 50*time.Millisecond)
	})

	t.Run("transaction", func(t *testing.T) {
		c := e.connect(t)
		tx, err := c.Begin(ctx)
		require.NoError(t, err)
		_, err = tx.Exec(ctx, "INSERT INTO shop.customers VALUES (4, 'Dee', 'Chile')")
		require.NoError(t, err)
		var names []string
		rows, err := tx.Query(ctx, "/* nl: customer names */")
		require.NoError(t, err)
		for rows.Next() {
			var n string
			require.NoError(t, rows.Scan(&n))
			names = append(names, n)
		}
		require.NoError(t, rows.Err())
		require.Equal(t, []string{"Ann", "Bob", "Cy", "Dee"}, names, "no cached rows inside a transaction: it sees its own insert")
		require.Equal(t, byte('T'), c.PgConn().TxStatus())
		_, err = tx.Exec(ctx, "INSERT INTO shop.customers VALUES (5, 'Eve', 'Chile')")
		require.NoError(t, err, "the transaction is still read-write")
		require.NoError(t, tx.Rollback(ctx))

		// A failed transaction: 25P02, and the client's rollback works.
		tx, err = c.Begin(ctx)
		require.NoError(t, err)
		_, err = tx.Exec(ctx, "SELECT 1/0")
		require.Error(t, err)
		_, err = tx.Exec(ctx, "/* nl: customer names */")
		requireSQLState(t, err, "25P02")
		require.NoError(t, tx.Rollback(ctx))
		requireAlive(t, c)
	})

	t.Run("row limit", func(t *testing.T) {
		rows, err := c.Query(ctx, "/* nl: all orders */")
		require.NoError(t, err)
		n := 0
		for rows.Next() {
			n++
		}
		require.NoError(t, rows.Err())
		require.Equal(t, 7, n)
		require.Equal(t, "SELECT 7", rows.CommandTag().String())
	})

	t.Run("permission denied and no cached rows", func(t *testing.T) {
		// The owner's answer is cached; a role that may read none of the
		// tables is told no table matches (42P01), as for a catalog without
		// them: it never learns the names of tables it cannot read.
		var first string
		require.NoError(t, c.QueryRow(ctx, "/* nl: customer names */").Scan(&first))
		role := e.newRole(t, "")
		rc := e.connect(t, "user", role)
		_, err := rc.Exec(ctx, "/* nl: customer names */")
		pe := requireSQLState(t, err, "42P01")
		require.NotContains(t, pe.Message+pe.Detail+pe.Hint, "customers")
		requireAlive(t, rc)

		// A reader whose privilege is revoked after caching gets 42501 too.
		reader := e.newRole(t, "GRANT SELECT ON shop.customers TO %s")
		rd := e.connect(t, "user", reader)
		for range 2 {
			require.NoError(t, rd.QueryRow(ctx, "/* nl: customer names */").Scan(&first))
		}
		_, err = e.admin.Exec(ctx, "REVOKE SELECT ON shop.customers FROM "+reader)
		require.NoError(t, err)
		rows, err := rd.Query(ctx, "/* nl: customer names */")
		require.NoError(t, err)
		for rows.Next() {
			t.Fatal("a revoked role got cached rows")
		}
		requireSQLState(t, rows.Err(), "42501")
	})
}

func TestNLWithoutLLM(t *testing.T) {
	e := startNL(t, nlOpts{noLLM: true})
	c := e.connect(t)
	_, err := c.Exec(context.Background(), "/* nl: How many orders per country? */")
	pe := requireSQLState(t, err, "55000")
	require.Contains(t, pe.Message, "LLM")
	require.True(t, strings.HasPrefix(pe.Detail, "RETRIEVE found: shop."), pe.Detail)
	require.Contains(t, pe.Hint, "--llm-url")
	requireAlive(t, c)
}

func TestNLTimeouts(t *testing.T) {
	e := startNL(t, nlOpts{llmTimeout: 300 * time.Millisecond, cfg: sqlgen.Config{StatementTimeout: 300 * time.Millisecond}})
	c := e.connect(t)
	_, err := c.Exec(context.Background(), "/* nl: sleepy llm about customers */")
	pe := requireSQLState(t, err, "57014")
	require.Contains(t, pe.Message, "LLM")
	requireAlive(t, c)
	_, err = c.Exec(context.Background(), "/* nl: slow customers */")
	pe = requireSQLState(t, err, "57014")
	require.Contains(t, pe.Message, "statement timeout")
	requireAlive(t, c)
}

// fastCfg keeps the row limit small so the limit is observable.
func fastCfg() sqlgen.Config {
	return sqlgen.Config{RowLimit: 7, StatementTimeout: 20 * time.Second}
}
