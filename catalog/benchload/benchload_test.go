package benchload_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/catalog/benchload"
	"github.com/atriumdb/atrium/test/testdb"
)

func TestLoadSpiderDatabases(t *testing.T) {
	dir := testdb.SpiderDir(t, "tables.json")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	pool, err := pgxpool.New(ctx, testdb.New(t))
	require.NoError(t, err)
	defer pool.Close()

	opts := benchload.Options{DBIDs: []string{"concert_singer", "wta_1", "cre_Doc_Template_Mgt"}}
	res, err := benchload.Load(ctx, pool, dir, opts)
	require.NoError(t, err)
	require.Equal(t, opts.DBIDs, res.Loaded)
	require.Equal(t, []string{"wta_1"}, res.FromJSON)

	count := func(q string, args ...any) int {
		var n int
		require.NoError(t, pool.QueryRow(ctx, q, args...).Scan(&n), q)
		return n
	}
	require.Equal(t, 6, count(`SELECT count(*) FROM concert_singer.singer`))
	require.Equal(t, 4, count(`SELECT count(*) FROM information_schema.tables WHERE table_schema = 'concert_singer'`))
	// Mixed-case db_ids become lower-case schemas.
	require.Positive(t, count(`SELECT count(*) FROM information_schema.tables WHERE table_schema = 'cre_doc_template_mgt'`))
	// wta_1 comes from tables.json: tables, keys, no rows.
	require.Equal(t, 3, count(`SELECT count(*) FROM information_schema.tables WHERE table_schema = 'wta_1'`))
	require.Equal(t, 0, count(`SELECT count(*) FROM wta_1.players`))
	require.Positive(t, count(`SELECT count(*) FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace WHERE n.nspname = 'wta_1' AND c.contype = 'f'`))
	require.Positive(t, count(`SELECT count(*) FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace WHERE n.nspname = 'wta_1' AND c.contype = 'p'`))

	// Loading again changes nothing; Replace reloads.
	res, err = benchload.Load(ctx, pool, dir, opts)
	require.NoError(t, err)
	require.Empty(t, res.Loaded)
	require.Len(t, res.Unchanged, 3)
	opts.Replace = true
	opts.DBIDs = []string{"concert_singer"}
	res, err = benchload.Load(ctx, pool, dir, opts)
	require.NoError(t, err)
	require.Equal(t, []string{"concert_singer"}, res.Loaded)
	require.Equal(t, 6, count(`SELECT count(*) FROM concert_singer.singer`))
}

func TestLoadDefaultsToQuestionDatabases(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tables.json"), []byte(`[
	 {"db_id": "Shop", "table_names_original": ["Item", "Sale"], "table_names": ["item", "sale"],
	  "column_names_original": [[-1, "*"], [0, "ItemID"], [0, "Name"], [1, "SaleID"], [1, "ItemID"], [1, "Qty"]],
	  "column_types": ["text", "number", "text", "number", "number", "number"],
	  "primary_keys": [1, [3]], "foreign_keys": [[4, 1]]},
	 {"db_id": "unused", "table_names_original": ["x"], "table_names": ["x"], "column_names_original": [[-1, "*"], [0, "a"]],
	  "column_types": ["text", "text"], "primary_keys": [], "foreign_keys": []}]`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "questions.json"), []byte(`[{"db_id": "Shop", "question": "q", "SQL": "SELECT 1"}]`), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "databases"), 0o755))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool, err := pgxpool.New(ctx, testdb.New(t))
	require.NoError(t, err)
	defer pool.Close()
	res, err := benchload.Load(ctx, pool, dir, benchload.Options{})
	require.NoError(t, err)
	require.Equal(t, []string{"Shop"}, res.Loaded)
	var fk int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND conrelid = 'shop.sale'::regclass`).Scan(&fk))
	require.Equal(t, 1, fk)
	var unused bool
	require.NoError(t, pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = 'unused')`).Scan(&unused))
	require.False(t, unused)
}
