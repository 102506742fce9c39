package migrations_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/migrations"
	"github.com/atriumdb/atrium/test/testdb"
)

func learningDB(t *testing.T) (context.Context, *pgx.Conn) {
	t.Helper()
	dsn := testdb.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	_, err := migrations.UpDSN(ctx, dsn, migrations.Options{})
	require.NoError(t, err)
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close(context.Background()) })
	return ctx, conn
}

func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

func TestLearningVersionMoves(t *testing.T) {
	ctx, conn := learningDB(t)
	lv := func() int64 {
		var v int64
		require.NoError(t, conn.QueryRow(ctx, "SELECT learning_version FROM atrium.catalog_state").Scan(&v))
		return v
	}
	var catalogVersion int64
	require.NoError(t, conn.QueryRow(ctx, "SELECT version FROM atrium.catalog_state").Scan(&catalogVersion))

	for _, tc := range []struct {
		sql   string
		moves bool
	}{
		{"INSERT INTO atrium.examples (question, sql) VALUES ('how many orders', 'SELECT count(*) FROM orders')", true},
		{"UPDATE atrium.examples SET enabled = false", true},
		{"DELETE FROM atrium.examples", true},
		{"INSERT INTO atrium.glossary (term, definition) VALUES ('active customer', 'ordered in the last 90 days')", true},
		{"UPDATE atrium.glossary SET reviewed = true", true},
		{"DELETE FROM atrium.glossary", true},
		{"TRUNCATE atrium.glossary", true},
		{`INSERT INTO atrium.feedback (request_id, database_name, role_name, question, sql, verdict, candidate)
			VALUES ('r1', 'db', 'ann', 'q', 'SELECT 1', 'good', true)`, false},
		{`INSERT INTO atrium.feedback (request_id, database_name, role_name, question, sql, verdict, hint)
			VALUES ('r2', 'db', 'ann', 'q', 'SELECT 1', 'wrong', 'wrong year')`, true},
	} {
		before := lv()
		_, err := conn.Exec(ctx, tc.sql)
		require.NoError(t, err, tc.sql)
		if tc.moves {
			require.Greater(t, lv(), before, tc.sql)
		} else {
			require.Equal(t, before, lv(), tc.sql)
		}
	}
	var after int64
	require.NoError(t, conn.QueryRow(ctx, "SELECT version FROM atrium.catalog_state").Scan(&after))
	require.Equal(t, catalogVersion, after, "learning never moves the catalog's own version")

	// A curator with INSERT on examples only needs no privilege on
	// catalog_state: the trigger runs as its owner.
	var b [4]byte
	_, _ = rand.Read(b[:])
	role := "atrium_lv_" + hex.EncodeToString(b[:])
	_, err := conn.Exec(ctx, "CREATE ROLE "+role+"; GRANT USAGE ON SCHEMA atrium TO "+role+"; GRANT INSERT ON atrium.examples TO "+role)
	require.NoError(t, err)
	t.Cleanup(func() {
		_, _ = conn.Exec(context.Background(), "RESET ROLE; DROP OWNED BY "+role+"; DROP ROLE "+role)
	})
	before := lv()
	_, err = conn.Exec(ctx, "SET ROLE "+role+"; INSERT INTO atrium.examples (question, sql) VALUES ('q', 'SELECT 1'); RESET ROLE")
	require.NoError(t, err)
	require.Greater(t, lv(), before)
	_, err = conn.Exec(ctx, "SET ROLE "+role+"; UPDATE atrium.catalog_state SET version = version + 1")
	require.Equal(t, "42501", pgCode(err), "%v", err)
	_, err = conn.Exec(ctx, "RESET ROLE")
	require.NoError(t, err)
}

func TestPromoteFeedback(t *testing.T) {
	ctx, conn := learningDB(t)
	var good, corrected, wrong int64
	require.NoError(t, conn.QueryRow(ctx, `INSERT INTO atrium.feedback (request_id, database_name, role_name, question, sql, tables, verdict, candidate)
		VALUES ('r1', 'db', 'ann', 'customers in London', 'SELECT 1', '{shop.customers}', 'good', true) RETURNING id`).Scan(&good))
	require.NoError(t, conn.QueryRow(ctx, `INSERT INTO atrium.feedback (request_id, database_name, role_name, question, sql, corrected_sql, tables, verdict, candidate)
		VALUES ('r2', 'db', 'ann', 'orders in 2024', 'SELECT 2', 'SELECT 3', '{shop.orders}', 'wrong', true) RETURNING id`).Scan(&corrected))
	require.NoError(t, conn.QueryRow(ctx, `INSERT INTO atrium.feedback (request_id, database_name, role_name, question, sql, verdict, hint)
		VALUES ('r3', 'db', 'bob', 'q', 'SELECT 4', 'wrong', 'no') RETURNING id`).Scan(&wrong))

	promote := func(id int64) (int64, error) {
		var ex int64
		err := conn.QueryRow(ctx, "SELECT atrium.promote_feedback($1)", id).Scan(&ex)
		return ex, err
	}
	ex, err := promote(good)
	require.NoError(t, err)
	again, err := promote(good)
	require.NoError(t, err)
	require.Equal(t, ex, again, "promoting twice returns the same example")
	var question, sql, source string
	var tables []string
	var fid int64
	require.NoError(t, conn.QueryRow(ctx, "SELECT question, sql, tables, source, feedback_id FROM atrium.examples WHERE id = $1", ex).
		Scan(&question, &sql, &tables, &source, &fid))
	require.Equal(t, "customers in London", question)
	require.Equal(t, "SELECT 1", sql)
	require.Equal(t, []string{"shop.customers"}, tables)
	require.Equal(t, "feedback", source)
	require.Equal(t, good, fid)

	ex2, err := promote(corrected)
	require.NoError(t, err)
	require.NoError(t, conn.QueryRow(ctx, "SELECT sql FROM atrium.examples WHERE id = $1", ex2).Scan(&sql))
	require.Equal(t, "SELECT 3", sql, "the corrected SQL, not the judged one")

	_, err = promote(wrong)
	require.Equal(t, "22023", pgCode(err), "%v", err)
	_, err = promote(987654)
	require.Equal(t, "P0002", pgCode(err), "%v", err)

	var n int
	require.NoError(t, conn.QueryRow(ctx, "SELECT count(*) FROM atrium.examples").Scan(&n))
	require.Equal(t, 2, n)
	require.NoError(t, conn.QueryRow(ctx, "SELECT count(*) FROM atrium.query_log_feedback WHERE example_id IS NOT NULL").Scan(&n))
	require.Equal(t, 2, n)
}

func TestGlossaryTermUniqueIgnoringCase(t *testing.T) {
	ctx, conn := learningDB(t)
	_, err := conn.Exec(ctx, "INSERT INTO atrium.glossary (term, definition) VALUES ('Active Customer', 'd')")
	require.NoError(t, err)
	_, err = conn.Exec(ctx, "INSERT INTO atrium.glossary (term, definition) VALUES ('  active CUSTOMER ', 'd')")
	require.Equal(t, "23505", pgCode(err), "%v", err)
	_, err = conn.Exec(ctx, "INSERT INTO atrium.glossary (term, definition) VALUES ('active customers', 'd')")
	require.NoError(t, err, "a different word is a different term")
	_, err = conn.Exec(ctx, "INSERT INTO atrium.glossary (term, definition) VALUES ('  ', 'd')")
	require.Equal(t, "23514", pgCode(err), "%v", err)
}
