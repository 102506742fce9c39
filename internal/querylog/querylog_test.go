package querylog

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/atriumdb/atrium/internal/telemetry"
	"github.com/atriumdb/atrium/migrations"
	"github.com/atriumdb/atrium/test/testdb"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// catalogDB returns a pool on a fresh database with the catalog schema
// applied by the real migration runner.
func catalogDB(t *testing.T) (*pgxpool.Pool, string) {
	t.Helper()
	dsn := testdb.New(t, "vector", "pg_trgm")
	ctx := context.Background()
	_, err := migrations.UpDSN(ctx, dsn, migrations.Options{})
	require.NoError(t, err)
	pool, err := pgxpool.New(ctx, dsn)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return pool, dsn
}

func metrics() (*telemetry.QueryLogMetrics, *prometheus.Registry) {
	reg := prometheus.NewRegistry()
	return telemetry.NewQueryLogMetrics(reg), reg
}

func count(t *testing.T, pool *pgxpool.Pool) int {
	t.Helper()
	var n int
	require.NoError(t, pool.QueryRow(context.Background(), "SELECT count(*) FROM atrium.query_log").Scan(&n))
	return n
}

func TestWriteAndReadBack(t *testing.T) {
	pool, _ := catalogDB(t)
	m, _ := metrics()
	w := New(pool, Config{Instance: "atrium-0", FlushInterval: time.Hour}, Options{Metrics: m})

	th := 0.42
	ver := int64(7)
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	require.True(t, w.Log(Entry{
		Time: at, RequestID: "r1", Database: "shop", Role: "analyst", Application: "psql",
		Kind: KindNL, Question: "how many orders in March?", Tables: []string{"sales.orders", "sales.customers"},
		Threshold: &th, CatalogVersion: &ver, SQL: "SELECT count(*) FROM sales.orders",
		Status: StatusOK, Rows: 1, CacheHit: false, Model: "gpt-test",
		PromptTokens: 812, CompletionTokens: 40, RepairRounds: 1, Total: 1250 * time.Millisecond,
		Stages: map[string]time.Duration{"retrieve": 4100 * time.Microsecond, "generate": time.Second},
	}))
	require.True(t, w.Log(Entry{
		RequestID: "r2", Database: "shop", Role: "intern", Kind: KindNL, Question: "salaries?",
		Status: StatusError, SQLState: "42501", Error: "permission denied for table salaries",
	}))
	require.True(t, w.Log(Entry{
		RequestID: "r3", Database: "shop", Role: "analyst", Kind: KindRetrieve, Question: "orders",
		Status: "weird", CacheHit: true, CacheTier: telemetry.TierResult,
	}))
	require.False(t, w.Log(Entry{RequestID: "r4", Kind: "drop table", Status: StatusOK}), "an invalid kind is rejected")
	require.NoError(t, w.Close(context.Background()))
	require.Equal(t, 3.0, testutil.ToFloat64(m.Written))
	require.Equal(t, 1.0, testutil.ToFloat64(m.Dropped.WithLabelValues(telemetry.DropInvalid)))
	require.Equal(t, 0.0, testutil.ToFloat64(m.QueueLength))

	ctx := context.Background()
	var (
		loggedAt                      time.Time
		instance, db, role, app, kind string
		question, status              string
		tables                        []string
		threshold                     *float64
		catalogVersion                *int64
		sql, sqlstate, errMsg, tier   *string
		total                         float64
		stages                        []byte
		prompt, completion, repairs   int
	)
	require.NoError(t, pool.QueryRow(ctx, `SELECT logged_at, instance, database_name, role_name, application_name,
		kind, question, status, chosen_tables, threshold, catalog_version, generated_sql, sqlstate, error_message,
		cache_tier, total_ms, stage_ms, prompt_tokens, completion_tokens, repair_rounds
		FROM atrium.query_log WHERE request_id = 'r1'`).Scan(&loggedAt, &instance, &db, &role, &app,
		&kind, &question, &status, &tables, &threshold, &catalogVersion, &sql, &sqlstate, &errMsg,
		&tier, &total, &stages, &prompt, &completion, &repairs))
	require.True(t, at.Equal(loggedAt))
	require.Equal(t, []string{"atrium-0", "shop", "analyst", "psql", "nl", "ok"}, []string{instance, db, role, app, kind, status})
	require.Equal(t, []string{"sales.orders", "sales.customers"}, tables)
	require.InDelta(t, 0.42, *threshold, 1e-9)
	require.Equal(t, int64(7), *catalogVersion)
	require.Equal(t, "SELECT count(*) FROM sales.orders", *sql)
	require.Nil(t, sqlstate)
	require.Nil(t, errMsg)
	require.Nil(t, tier)
	require.Equal(t, 1250.0, total)
	var st map[string]float64
	require.NoError(t, json.Unmarshal(stages, &st))
	require.Equal(t, map[string]float64{"retrieve": 4.1, "generate": 1000}, st)
	require.Equal(t, []int{812, 40, 1}, []int{prompt, completion, repairs})

	require.NoError(t, pool.QueryRow(ctx, `SELECT sqlstate, error_message, threshold FROM atrium.query_log WHERE request_id = 'r2'`).
		Scan(&sqlstate, &errMsg, &threshold))
	require.Equal(t, "42501", *sqlstate)
	require.Contains(t, *errMsg, "permission denied")
	require.Nil(t, threshold)

	var hit bool
	require.NoError(t, pool.QueryRow(ctx, `SELECT status, cache_hit, cache_tier FROM atrium.query_log WHERE request_id = 'r3'`).
		Scan(&status, &hit, &tier))
	require.Equal(t, StatusError, status, "an unknown status is recorded as an error")
	require.True(t, hit)
	require.Equal(t, "result", *tier)

	// After Close, entries are dropped and counted, never queued.
	require.False(t, w.Log(Entry{RequestID: "late", Kind: KindNL, Status: StatusOK}))
	require.Equal(t, 1.0, testutil.ToFloat64(m.Dropped.WithLabelValues(telemetry.DropClosed)))
	require.NoError(t, w.Close(context.Background()), "Close is idempotent")
}

func TestFlushInterval(t *testing.T) {
	pool, _ := catalogDB(t)
	w := New(pool, Config{FlushInterval: 10 * time.Millisecond, BatchSize: 1000}, Options{})
	defer w.Close(context.Background())
	require.True(t, w.Log(Entry{RequestID: "tick", Kind: KindNL, Status: StatusOK}))
	// Written by the timer, not by a full batch or Close.
	require.Eventually(t, func() bool { return count(t, pool) == 1 }, time.Minute, 10*time.Millisecond)
}

// TestSlowDatabaseDropsInsteadOfBlocking holds an exclusive lock on the
// table so every COPY waits, as with an overloaded catalog database: Log
// must keep returning at once, drop and count what does not fit, and write
// what it accepted once the database is back.
func TestSlowDatabaseDropsInsteadOfBlocking(t *testing.T) {
	pool, dsn := catalogDB(t)
	ctx := context.Background()
	locker, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer locker.Close(ctx)
	tx, err := locker.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, "LOCK TABLE atrium.query_log IN ACCESS EXCLUSIVE MODE")
	require.NoError(t, err)

	m, _ := metrics()
	w := New(pool, Config{QueueSize: 8, BatchSize: 4, FlushInterval: time.Millisecond, WriteTimeout: time.Minute}, Options{Metrics: m})

	accepted, dropped := 0, 0
	for i := 0; dropped < 50; i++ {
		require.Less(t, i, 1_000_000, "Log never dropped: the queue is not bounded")
		if w.Log(Entry{RequestID: fmt.Sprint("slow-", i), Kind: KindNL, Question: "q", Status: StatusOK}) {
			accepted++
		} else {
			dropped++
		}
	}
	require.LessOrEqual(t, accepted, 8+4+4, "at most a queue plus the batches in flight are held")
	require.Equal(t, float64(dropped), testutil.ToFloat64(m.Dropped.WithLabelValues(telemetry.DropQueueFull)))

	require.NoError(t, tx.Commit(ctx)) // the database recovers
	require.NoError(t, w.Close(ctx))
	require.Equal(t, accepted, count(t, pool), "every accepted entry is written")
	require.Equal(t, float64(accepted), testutil.ToFloat64(m.Written))
}

func TestCloseDeadlineCancelsStuckWrite(t *testing.T) {
	pool, dsn := catalogDB(t)
	ctx := context.Background()
	locker, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer locker.Close(ctx)
	tx, err := locker.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx)
	_, err = tx.Exec(ctx, "LOCK TABLE atrium.query_log IN ACCESS EXCLUSIVE MODE")
	require.NoError(t, err)

	m, _ := metrics()
	w := New(pool, Config{FlushInterval: time.Hour, WriteTimeout: time.Hour}, Options{Metrics: m})
	require.True(t, w.Log(Entry{RequestID: "stuck", Kind: KindNL, Status: StatusOK}))
	cctx, cancel := context.WithCancel(ctx)
	cancel() // no time at all to drain
	require.ErrorIs(t, w.Close(cctx), context.Canceled)
	require.Equal(t, 1.0, testutil.ToFloat64(m.Dropped.WithLabelValues(telemetry.DropClosed)))
}

func TestWriteErrorIsCountedNotFatal(t *testing.T) {
	dsn := testdb.New(t) // no migration: the table does not exist
	pool, err := pgxpool.New(context.Background(), dsn)
	require.NoError(t, err)
	defer pool.Close()
	m, _ := metrics()
	w := New(pool, Config{FlushInterval: time.Hour}, Options{Metrics: m})
	for i := range 3 {
		require.True(t, w.Log(Entry{RequestID: fmt.Sprint(i), Kind: KindNL, Status: StatusOK}))
	}
	require.NoError(t, w.Close(context.Background()))
	require.Equal(t, 3.0, testutil.ToFloat64(m.Dropped.WithLabelValues(telemetry.DropWriteError)))
	require.Equal(t, 0.0, testutil.ToFloat64(m.Written))
}

func TestRetention(t *testing.T) {
	pool, _ := catalogDB(t)
	m, _ := metrics()
	now := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	w := New(pool, Config{Retention: 30 * 24 * time.Hour, FlushInterval: time.Hour},
		Options{Metrics: m, Now: func() time.Time { return now }, firstPurge: time.Hour})
	for i, age := range []time.Duration{0, 24 * time.Hour, 29 * 24 * time.Hour, 31 * 24 * time.Hour, 400 * 24 * time.Hour} {
		require.True(t, w.Log(Entry{Time: now.Add(-age), RequestID: fmt.Sprint(i), Kind: KindNL, Status: StatusOK}))
	}
	require.NoError(t, w.Close(context.Background()))
	require.Equal(t, 5, count(t, pool))

	n, err := w.Purge(context.Background())
	require.NoError(t, err)
	require.Equal(t, int64(2), n)
	require.Equal(t, 3, count(t, pool))
	require.Equal(t, 2.0, testutil.ToFloat64(m.Purged))

	w.SetRetention(0)
	n, err = w.Purge(context.Background())
	require.NoError(t, err)
	require.Zero(t, n, "retention 0 keeps everything")
}

func TestPurgeLoopRuns(t *testing.T) {
	pool, _ := catalogDB(t)
	now := time.Now()
	w := New(pool, Config{Retention: time.Hour, PurgeInterval: 5 * time.Millisecond, FlushInterval: time.Millisecond},
		Options{firstPurge: time.Millisecond})
	defer w.Close(context.Background())
	require.True(t, w.Log(Entry{Time: now.Add(-2 * time.Hour), RequestID: "old", Kind: KindNL, Status: StatusOK}))
	require.True(t, w.Log(Entry{Time: now, RequestID: "new", Kind: KindNL, Status: StatusOK}))
	require.Eventually(t, func() bool {
		var ids []string
		rows, err := pool.Query(context.Background(), "SELECT request_id FROM atrium.query_log")
		require.NoError(t, err)
		ids, err = pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		return len(ids) == 1 && ids[0] == "new"
	}, time.Minute, 10*time.Millisecond)
}

// TestSchemaDocumented checks what DBAs rely on: a comment on the table and
// on every column, and the index on time.
func TestSchemaDocumented(t *testing.T) {
	pool, _ := catalogDB(t)
	ctx := context.Background()
	var tableComment *string
	require.NoError(t, pool.QueryRow(ctx, `SELECT obj_description('atrium.query_log'::regclass, 'pg_class')`).Scan(&tableComment))
	require.NotNil(t, tableComment)
	rows, err := pool.Query(ctx, `SELECT attname FROM pg_attribute
		WHERE attrelid = 'atrium.query_log'::regclass AND attnum > 0 AND NOT attisdropped
		  AND col_description(attrelid, attnum) IS NULL`)
	require.NoError(t, err)
	undocumented, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Empty(t, undocumented)
	var indexdef string
	require.NoError(t, pool.QueryRow(ctx, `SELECT indexdef FROM pg_indexes
		WHERE schemaname = 'atrium' AND tablename = 'query_log' AND indexdef LIKE '%(logged_at)%'`).Scan(&indexdef))

	// Every column the writer fills exists.
	var n int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM pg_attribute
		WHERE attrelid = 'atrium.query_log'::regclass AND attname = ANY($1)`, columns).Scan(&n))
	require.Equal(t, len(columns), n)
}

// TestExampleAndFollowUp: the example that answered and the question a
// follow-up continued are stored, and NULL when there is none.
func TestExampleAndFollowUp(t *testing.T) {
	pool, _ := catalogDB(t)
	m, _ := metrics()
	w := New(pool, Config{FlushInterval: time.Hour}, Options{Metrics: m})
	require.True(t, w.Log(Entry{RequestID: "q1", Database: "shop", Role: "a", Kind: KindNL, Question: "orders per country", Status: StatusOK, ExampleID: 7}))
	require.True(t, w.Log(Entry{RequestID: "q2", Database: "shop", Role: "a", Kind: KindNL, Question: "and by month?", Status: StatusOK, FollowUpOf: "q1"}))
	require.NoError(t, w.Close(context.Background()))

	ctx := context.Background()
	var (
		example *int64
		of      *string
	)
	require.NoError(t, pool.QueryRow(ctx, `SELECT example_id, follow_up_of FROM atrium.query_log WHERE request_id = 'q1'`).Scan(&example, &of))
	require.Equal(t, int64(7), *example)
	require.Nil(t, of)
	require.NoError(t, pool.QueryRow(ctx, `SELECT example_id, follow_up_of FROM atrium.query_log WHERE request_id = 'q2'`).Scan(&example, &of))
	require.Nil(t, example)
	require.Equal(t, "q1", *of)
}
