package migrations_test

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/migrations"
	"github.com/atriumdb/atrium/test/testdb"
)

func TestUpIsIdempotentAndRecorded(t *testing.T) {
	dsn := testdb.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	all, err := migrations.Load(nil)
	require.NoError(t, err)
	res, err := migrations.UpDSN(ctx, dsn, migrations.Options{})
	require.NoError(t, err)
	require.Len(t, res.Applied, len(all))
	require.Equal(t, migrations.Latest(), res.Current)

	res, err = migrations.UpDSN(ctx, dsn, migrations.Options{})
	require.NoError(t, err)
	require.Empty(t, res.Applied)
	require.Equal(t, migrations.Latest(), res.Current)

	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer conn.Close(ctx)
	var n int
	require.NoError(t, conn.QueryRow(ctx, "SELECT count(*) FROM atrium.schema_migrations").Scan(&n))
	require.Equal(t, len(all), n)
	cur, err := migrations.Current(ctx, conn)
	require.NoError(t, err)
	require.Equal(t, migrations.Latest(), cur)

	// Every catalog table and column is documented for the DBA.
	var undocumented []string
	rows, err := conn.Query(ctx, `
		SELECT c.relname || coalesce('.' || a.attname, '')
		  FROM pg_class c
		  JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'atrium'
		  LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND c.relkind = 'r'
		 WHERE c.relkind IN ('r', 'v')
		   AND obj_description(c.oid, 'pg_class') IS NOT NULL IS NOT TRUE
		    OR (c.relkind = 'r' AND n.nspname = 'atrium' AND a.attnum IS NOT NULL AND col_description(c.oid, a.attnum) IS NULL
		        AND c.relname <> 'schema_migrations')`)
	require.NoError(t, err)
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		undocumented = append(undocumented, s)
	}
	require.NoError(t, rows.Err())
	require.Empty(t, undocumented)
}

func TestUpConcurrentAppliesOnce(t *testing.T) {
	dsn := testdb.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	results := make([]migrations.Result, 4)
	errs := make([]error, 4)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = migrations.UpDSN(ctx, dsn, migrations.Options{})
		}()
	}
	wg.Wait()
	total := 0
	for i := range results {
		require.NoError(t, errs[i])
		total += len(results[i].Applied)
	}
	all, err := migrations.Load(nil)
	require.NoError(t, err)
	require.Equal(t, len(all), total, "each migration applied exactly once")
}

func TestFailedMigrationRollsBackWhole(t *testing.T) {
	dsn := testdb.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer conn.Close(ctx)

	src := os.DirFS("testdata/broken")
	res, err := migrations.UpConn(ctx, conn, migrations.Options{Source: src})
	require.Error(t, err)
	require.ErrorContains(t, err, "0002_broken.sql")
	require.Len(t, res.Applied, 1)

	var half, ok *string
	require.NoError(t, conn.QueryRow(ctx, "SELECT to_regclass('atrium.probe_half')::text, to_regclass('atrium.probe_ok')::text").Scan(&half, &ok))
	require.Nil(t, half, "the failed migration's first statements must be rolled back")
	require.NotNil(t, ok)
	cur, err := migrations.Current(ctx, conn)
	require.NoError(t, err)
	require.Equal(t, 1, cur)

	// The session lock was released: another runner is not blocked.
	var free bool
	require.NoError(t, conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1, $2)", int32(migrations.LockClass), int32(migrations.LockKey)).Scan(&free))
	require.True(t, free)
}
