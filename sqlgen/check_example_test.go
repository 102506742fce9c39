package sqlgen

import (
	"context"
	"errors"
	"net/url"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/migrations"
	"github.com/atriumdb/atrium/proxy"
	"github.com/atriumdb/atrium/test/testdb"
)

// sqlstate is the SQLSTATE an error carries, proxy's or the server's.
func sqlstate(err error) string {
	var pe *proxy.Error
	if errors.As(err, &pe) {
		return pe.Code
	}
	var ue *proxy.UpstreamError
	if errors.As(err, &ue) {
		return ue.Code
	}
	return ""
}

func TestCheckExample(t *testing.T) {
	dsn := testdb.New(t)
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer admin.Close(ctx)
	_, err = admin.Exec(ctx, fixture+`
		CREATE SCHEMA hr;
		CREATE TABLE hr.salaries (id int, amount int);
		DO $$ BEGIN
		  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'atrium_check_example') THEN
		    CREATE ROLE atrium_check_example LOGIN;
		  END IF;
		END $$;
		GRANT USAGE ON SCHEMA shop TO atrium_check_example;
		GRANT SELECT ON shop.customers, shop.orders TO atrium_check_example;
		ALTER ROLE atrium_check_example IN DATABASE `+pgx.Identifier{dbName(t, dsn)}.Sanitize()+` SET search_path = shop, public`)
	require.NoError(t, err)

	u, err := url.Parse(dsn)
	require.NoError(t, err)
	u.User = url.User("atrium_check_example")
	up := connectUpstream(t, u.String())

	good, err := CheckExample(ctx, up, `WITH big AS (SELECT * FROM orders WHERE amount > 100)
		SELECT c.name, count(*) FROM customers c JOIN big ON big.customer_id = c.id GROUP BY 1;`, 0)
	require.NoError(t, err)
	require.Equal(t, []string{"shop.customers", "shop.orders"}, good.Tables)
	require.NotContains(t, good.SQL, ";")
	require.Equal(t, byte('I'), up.TxStatus(), "the read-only transaction is rolled back")

	v, err := CheckExample(ctx, up, "VALUES (1), (2)", 0)
	require.NoError(t, err)
	require.Empty(t, v.Tables)

	for _, tc := range []struct{ name, sql, code string }{
		{"delete", "DELETE FROM shop.orders", CodeNotReadOnly},
		{"two statements", "SELECT 1; SELECT 2", CodeNotReadOnly},
		{"syntax", "SELEC name FROM customers", CodeSyntax},
		{"empty", " ; ", CodeSyntax},
		{"only a comment", "-- nothing here", CodeSyntax},
		{"no privilege", "SELECT * FROM hr.salaries", "42501"},
		{"unknown table", "SELECT * FROM nowhere", "42P01"},
		{"volatile function", "SELECT nextval('x')", CodeNotReadOnly},
		{"data-modifying CTE", "WITH d AS (DELETE FROM shop.orders RETURNING *) SELECT * FROM d", CodeNotReadOnly},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CheckExample(ctx, up, tc.sql, 0)
			require.Error(t, err)
			require.Equal(t, tc.code, sqlstate(err), "%v", err)
			require.NotContains(t, err.Error(), "generated SQL")
			require.NotContains(t, err.Error(), "LLM")
			require.Equal(t, byte('I'), up.TxStatus())
		})
	}

	// Inside the caller's own transaction: a savepoint, and the
	// transaction goes on as it was.
	_, err = up.Query(ctx, "BEGIN")
	require.NoError(t, err)
	_, err = CheckExample(ctx, up, "SELECT * FROM hr.salaries", 0)
	require.Equal(t, "42501", sqlstate(err))
	require.Equal(t, byte('T'), up.TxStatus())
	_, err = up.Query(ctx, "ROLLBACK")
	require.NoError(t, err)
}

func dbName(t *testing.T, dsn string) string {
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	return u.Path[1:]
}

func TestCatalogVersionFollowsLearningVersion(t *testing.T) {
	dsn := testdb.New(t, "vector", "pg_trgm")
	ctx := context.Background()
	_, err := migrations.UpDSN(ctx, dsn, migrations.Options{})
	require.NoError(t, err)
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer conn.Close(ctx)

	cv := NewCatalogVersion(conn, -1)
	v0, err := cv.CatalogVersion(ctx)
	require.NoError(t, err)
	_, err = conn.Exec(ctx, "INSERT INTO atrium.glossary (term, definition) VALUES ('active customer', 'bought in the last 90 days')")
	require.NoError(t, err)
	v1, err := cv.CatalogVersion(ctx)
	require.NoError(t, err)
	require.Greater(t, v1, v0, "a glossary change moves the cache's version")
	_, err = conn.Exec(ctx, "UPDATE atrium.catalog_state SET version = version + 1")
	require.NoError(t, err)
	v2, err := cv.CatalogVersion(ctx)
	require.NoError(t, err)
	require.Greater(t, v2, v1, "a catalog change moves it too")

	// A catalog from before migration 0020 says what to do.
	_, err = conn.Exec(ctx, "ALTER TABLE atrium.catalog_state DROP COLUMN learning_version CASCADE")
	require.NoError(t, err)
	_, err = cv.CatalogVersion(ctx)
	require.ErrorContains(t, err, "atrium migrate")
}
