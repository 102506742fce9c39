package catalog_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/catalog"
	"github.com/atriumdb/atrium/migrations"
	"github.com/atriumdb/atrium/test/testdb"
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func newPool(t *testing.T, dsn string) *pgxpool.Pool {
	t.Helper()
	p, err := pgxpool.New(context.Background(), dsn)
	require.NoError(t, err)
	t.Cleanup(p.Close)
	return p
}

func mustExec(t *testing.T, p *pgxpool.Pool, sqls ...string) {
	t.Helper()
	for _, q := range sqls {
		_, err := p.Exec(context.Background(), q)
		require.NoError(t, err, q)
	}
}

func queryInt(t *testing.T, p *pgxpool.Pool, q string, args ...any) int64 {
	t.Helper()
	var n int64
	require.NoError(t, p.QueryRow(context.Background(), q, args...).Scan(&n), q)
	return n
}

func version(t *testing.T, p *pgxpool.Pool) int64 {
	return queryInt(t, p, "SELECT version FROM atrium.catalog_state")
}

const oddSchema = `
CREATE SCHEMA "Sales Dept";
CREATE TABLE "Sales Dept"."Customer ""Quoted"" Ünïcode" (
    "CustomerID" integer PRIMARY KEY,
    "select" text,
    "Full Name" text NOT NULL
);
COMMENT ON TABLE "Sales Dept"."Customer ""Quoted"" Ünïcode" IS 'People who buy from us';
COMMENT ON COLUMN "Sales Dept"."Customer ""Quoted"" Ünïcode"."select" IS 'Preferred sales channel';
INSERT INTO "Sales Dept"."Customer ""Quoted"" Ünïcode" VALUES (1, 'web', 'Ford Motor Company'), (2, 'phone', 'Acme Öl GmbH'), (3, NULL, 'Zeta');
CREATE TABLE "Sales Dept".orders (
    order_id integer PRIMARY KEY,
    "customerId" integer REFERENCES "Sales Dept"."Customer ""Quoted"" Ünïcode"("CustomerID"),
    amount numeric
);
INSERT INTO "Sales Dept".orders VALUES (10, 1, 9.5), (11, 1, 3), (12, 2, 7);
-- No declared keys: the join must be inferred.
CREATE TABLE public.singer (singer_id integer PRIMARY KEY, name text);
CREATE TABLE public.concert_performance (perf integer, singer_id integer, venue text);
INSERT INTO public.singer VALUES (1, 'Adele'), (2, 'Bono'), (3, 'Cher'), (4, 'Dido');
INSERT INTO public.concert_performance VALUES (1, 1, 'Wembley'), (2, 2, 'Olympia'), (3, 2, 'Arena');
CREATE VIEW public.big_orders AS SELECT * FROM "Sales Dept".orders WHERE amount > 5;`

func TestSyncBuildsCatalog(t *testing.T) {
	ctx := testCtx(t)
	pool := newPool(t, testdb.New(t))
	mustExec(t, pool, oddSchema)

	_, err := catalog.Sync(ctx, pool, catalog.SyncOptions{})
	require.ErrorIs(t, err, catalog.ErrNotMigrated)

	var progress []catalog.Progress
	st, err := catalog.Sync(ctx, pool, catalog.SyncOptions{AutoMigrate: true, Progress: func(p catalog.Progress) { progress = append(progress, p) }})
	require.NoError(t, err)
	require.Equal(t, 5, st.Tables)
	require.Equal(t, 5, st.Rebuilt)
	require.NotEmpty(t, progress)
	require.Equal(t, catalog.Progress{Phase: "tables", Done: 5, Total: 5}, catalog.Progress{Phase: progress[0].Phase, Done: progress[0].Done, Total: progress[0].Total})

	var embName string
	var dim int
	require.NoError(t, pool.QueryRow(ctx, "SELECT embedder, dimension FROM atrium.catalog_state").Scan(&embName, &dim))
	require.Equal(t, "builtin-v1", embName)
	require.Equal(t, 256, dim)

	// Odd names are stored verbatim; the words are split for search.
	var kind, nameText, doc string
	var comment *string
	require.NoError(t, pool.QueryRow(ctx, `SELECT kind, comment, name_text, document FROM atrium.tables
		WHERE schema_name = 'Sales Dept' AND table_name = 'Customer "Quoted" Ünïcode'`).Scan(&kind, &comment, &nameText, &doc))
	require.Equal(t, "table", kind)
	require.Equal(t, "People who buy from us", *comment)
	require.Contains(t, nameText, "customer id")
	require.Contains(t, nameText, "ünïcode")
	require.Contains(t, doc, "select (text): Preferred sales channel")
	require.Contains(t, doc, "CustomerID: 1 | select: web | Full Name: Ford Motor Company")

	// A value finds its table, through full text and trigrams.
	require.Equal(t, int64(1), queryInt(t, pool, `SELECT count(*) FROM atrium.value_index v JOIN atrium.tables t ON t.id = v.table_id
		WHERE v.tsv @@ plainto_tsquery('simple', 'Ford Motor Company') AND t.table_name LIKE 'Customer%'`))
	require.Equal(t, int64(1), queryInt(t, pool, `SELECT count(*) FROM atrium.value_index WHERE value % 'Ford Motor Co'`))
	require.Equal(t, int64(1), queryInt(t, pool, `SELECT count(*) FROM atrium.tables WHERE tsv @@ to_tsquery('english', 'singers & concerts')`))

	// Views are catalogued; the vector index answers nearest-neighbour queries.
	require.Equal(t, int64(1), queryInt(t, pool, `SELECT count(*) FROM atrium.tables WHERE kind = 'view' AND table_name = 'big_orders'`))
	require.Equal(t, int64(5), queryInt(t, pool, `SELECT count(*) FROM atrium.tables WHERE vector_dims(embedding) = 256`))
	require.Equal(t, int64(14), queryInt(t, pool, `SELECT count(*) FROM atrium.columns WHERE embedding IS NOT NULL`))

	// Declared and inferred joins.
	var src string
	var score float64
	require.NoError(t, pool.QueryRow(ctx, `SELECT source, score FROM atrium.join_graph
		WHERE from_table = 'orders' AND to_table = 'Customer "Quoted" Ünïcode' AND from_columns = '{customerId}'`).Scan(&src, &score))
	require.Equal(t, "foreign_key", src)
	require.Equal(t, 1.0, score)
	var ev map[string]any
	require.NoError(t, pool.QueryRow(ctx, `SELECT source, score, evidence FROM atrium.join_graph
		WHERE from_table = 'concert_performance' AND to_table = 'singer'`).Scan(&src, &score, &ev))
	require.Equal(t, "inferred", src)
	require.GreaterOrEqual(t, score, 0.5)
	require.Equal(t, 1.0, ev["exact"])
	require.Equal(t, "primary_key", ev["to_unique"])

	// The DBA view has one row per table.
	var cols, joins string
	require.NoError(t, pool.QueryRow(ctx, `SELECT columns, joins_to FROM atrium.table_overview WHERE table_name = 'orders'`).Scan(&cols, &joins))
	require.Contains(t, cols, "order_id integer PK")
	require.Contains(t, joins, "foreign_key")

	// An unchanged database: nothing is rewritten and the version stands.
	v := version(t, pool)
	st, err = catalog.Sync(ctx, pool, catalog.SyncOptions{})
	require.NoError(t, err)
	require.Equal(t, 0, st.Rebuilt)
	require.Equal(t, 5, st.Unchanged)
	require.Equal(t, v, version(t, pool))

	// DDL: one table changes, one goes, one comes.
	mustExec(t, pool, `ALTER TABLE public.singer ADD COLUMN country text`,
		`DROP VIEW public.big_orders`, `CREATE TABLE public."Order" (id int)`)
	st, err = catalog.Sync(ctx, pool, catalog.SyncOptions{})
	require.NoError(t, err)
	require.Equal(t, 2, st.Rebuilt)
	require.Equal(t, 1, st.Removed)
	require.Greater(t, version(t, pool), v)
	require.Equal(t, int64(3), queryInt(t, pool, `SELECT column_count FROM atrium.tables WHERE table_name = 'singer'`))
	require.Equal(t, int64(1), queryInt(t, pool, `SELECT count(*) FROM atrium.join_graph WHERE from_table = 'concert_performance' AND to_table = 'singer'`))

	// Schema filters: leaving a schema out removes it from the catalog.
	st, err = catalog.Sync(ctx, pool, catalog.SyncOptions{Exclude: []string{"public"}})
	require.NoError(t, err)
	require.Equal(t, 2, st.Tables)
	require.Equal(t, int64(0), queryInt(t, pool, `SELECT count(*) FROM atrium.tables WHERE schema_name = 'public'`))
}

func TestSyncSkipsUnreadableTable(t *testing.T) {
	ctx := testCtx(t)
	dsn := testdb.New(t)
	admin := newPool(t, dsn)
	_, err := migrations.Up(ctx, admin, migrations.Options{})
	require.NoError(t, err)
	var b [4]byte
	_, _ = rand.Read(b[:])
	role := "atrium_sync_" + hex.EncodeToString(b[:])
	mustExec(t, admin,
		`CREATE TABLE public.open_data (id int PRIMARY KEY, label text)`,
		`INSERT INTO public.open_data VALUES (1, 'alpha')`,
		`CREATE TABLE public.secret_data (id int PRIMARY KEY, ssn text)`,
		`INSERT INTO public.secret_data VALUES (1, '123-45-6789')`,
		`CREATE ROLE `+role+` LOGIN`,
		`GRANT SELECT ON public.open_data TO `+role,
		`GRANT USAGE, CREATE ON SCHEMA atrium TO `+role,
		`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA atrium TO `+role,
		`GRANT USAGE ON ALL SEQUENCES IN SCHEMA atrium TO `+role,
		// The sync role must own the embedding columns to retype them.
		`ALTER TABLE atrium.tables OWNER TO `+role,
		`ALTER TABLE atrium.columns OWNER TO `+role)
	t.Cleanup(func() {
		a, err := pgx.Connect(context.Background(), testdb.AdminDSN())
		if err != nil {
			return
		}
		defer a.Close(context.Background())
		// The test database (and the role's objects in it) is dropped first
		// by testdb's cleanup, registered earlier, running later; drop the
		// role after.
		_, _ = a.Exec(context.Background(), "DROP ROLE IF EXISTS "+role)
	})
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	u.User = url.User(role)
	limited := newPool(t, u.String())

	st, err := catalog.Sync(ctx, limited, catalog.SyncOptions{})
	require.NoError(t, err)
	require.Equal(t, 2, st.Tables)
	require.Equal(t, 1, st.Skipped)
	var reason string
	require.NoError(t, admin.QueryRow(ctx, `SELECT skipped_reason FROM atrium.skipped_tables WHERE table_name = 'secret_data'`).Scan(&reason))
	require.Contains(t, reason, "permission denied")
	require.Equal(t, int64(0), queryInt(t, admin, `SELECT count(*) FROM atrium.value_index WHERE value LIKE '123%'`))
	require.Equal(t, int64(1), queryInt(t, admin, `SELECT count(*) FROM atrium.tables WHERE table_name = 'open_data' AND embedding IS NOT NULL`))

	// Granting access changes the fingerprint: the next sync reads it.
	mustExec(t, admin, `GRANT SELECT ON public.secret_data TO `+role)
	st, err = catalog.Sync(ctx, limited, catalog.SyncOptions{})
	require.NoError(t, err)
	require.Equal(t, 1, st.Rebuilt)
	require.Equal(t, int64(0), queryInt(t, admin, `SELECT count(*) FROM atrium.skipped_tables`))
}

func TestSyncBoundsWideTablesAndHugeRows(t *testing.T) {
	ctx := testCtx(t)
	pool := newPool(t, testdb.New(t))
	var cols []string
	for i := range 1500 {
		cols = append(cols, fmt.Sprintf("attribute_%d text", i))
	}
	mustExec(t, pool,
		`CREATE TABLE wide (`+strings.Join(cols, ", ")+`)`,
		`INSERT INTO wide (attribute_0, attribute_1499) VALUES ('first', 'last')`,
		`CREATE TABLE huge (id int PRIMARY KEY, body text, blob bytea)`,
		`INSERT INTO huge SELECT g, repeat('x', 2000000), decode(repeat('ff', 100000), 'hex') FROM generate_series(1, 3) g`)
	st, err := catalog.Sync(ctx, pool, catalog.SyncOptions{AutoMigrate: true})
	require.NoError(t, err)
	require.Equal(t, 2, st.Rebuilt)
	require.Equal(t, int64(1500), queryInt(t, pool, `SELECT count(*) FROM atrium.columns c JOIN atrium.tables t ON t.id = c.table_id WHERE t.table_name = 'wide'`))
	require.Equal(t, int64(1500), queryInt(t, pool, `SELECT column_count FROM atrium.tables WHERE table_name = 'wide'`))
	var maxDoc, maxVal int64
	require.NoError(t, pool.QueryRow(ctx, `SELECT max(octet_length(document)), max(octet_length(value_text)) FROM atrium.tables`).Scan(&maxDoc, &maxVal))
	require.LessOrEqual(t, maxDoc, int64(32<<10))
	require.LessOrEqual(t, maxVal, int64(16<<10))
	require.Equal(t, int64(0), queryInt(t, pool, `SELECT count(*) FROM atrium.columns WHERE EXISTS (SELECT 1 FROM unnest(sample_values) v WHERE length(v) > 200)`))
}

func TestConcurrentSyncsAreSerialised(t *testing.T) {
	ctx := testCtx(t)
	pool := newPool(t, testdb.New(t))
	mustExec(t, pool, `CREATE TABLE t1 (id int PRIMARY KEY)`)
	_, err := catalog.Sync(ctx, pool, catalog.SyncOptions{AutoMigrate: true})
	require.NoError(t, err)

	// Hold the sync lock the way a running sync does.
	holder, err := pgx.Connect(ctx, pool.Config().ConnString())
	require.NoError(t, err)
	defer holder.Close(ctx)
	_, err = holder.Exec(ctx, "SELECT pg_advisory_lock($1, 2)", int32(migrations.LockClass))
	require.NoError(t, err)

	_, err = catalog.Sync(ctx, pool, catalog.SyncOptions{})
	require.ErrorIs(t, err, catalog.ErrSyncInProgress)

	var wg sync.WaitGroup
	var waitErr error
	started := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		close(started)
		_, waitErr = catalog.Sync(ctx, pool, catalog.SyncOptions{Wait: true})
	}()
	<-started
	// The waiter is blocked on the lock (visible in pg_locks) until released.
	require.Eventually(t, func() bool {
		return queryInt(t, pool, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objid = 2`) == 1
	}, time.Minute, 20*time.Millisecond)
	_, err = holder.Exec(ctx, "SELECT pg_advisory_unlock($1, 2)", int32(migrations.LockClass))
	require.NoError(t, err)
	wg.Wait()
	require.NoError(t, waitErr)
}

// Every table is all old or all new: its column rows match its
// column_count and it has a vector.
func requireNoHalfWrittenTables(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	require.Equal(t, int64(0), queryInt(t, pool, `SELECT count(*) FROM atrium.tables t
		WHERE t.column_count <> (SELECT count(*) FROM atrium.columns c WHERE c.table_id = t.id)
		   OR (t.embedding IS NULL AND t.skipped_reason IS NULL)`))
}

func TestEmbedderFailureMidSync(t *testing.T) {
	ctx := testCtx(t)
	pool := newPool(t, testdb.New(t))
	for i := range 12 {
		mustExec(t, pool, fmt.Sprintf(`CREATE TABLE item_%02d (id int PRIMARY KEY, name text); INSERT INTO item_%02d VALUES (1, 'n%d')`, i, i, i))
	}
	fake := newFakeOpenAI(t)
	emb, err := catalog.NewEmbedder(catalog.EmbedderConfig{Kind: "openai", URL: fake.url(), Model: "fake-embed", Dimension: 32})
	require.NoError(t, err)
	fake.failEmbedAt = 3 // chunks 1 and 2 embed, chunk 3 fails

	_, err = catalog.Sync(ctx, pool, catalog.SyncOptions{AutoMigrate: true, Embedder: emb, ChunkSize: 4})
	var he *catalog.HTTPStatusError
	require.ErrorAs(t, err, &he)
	require.Equal(t, 500, he.Status)
	requireNoHalfWrittenTables(t, pool)
	written := queryInt(t, pool, `SELECT count(*) FROM atrium.tables`)
	require.Equal(t, int64(8), written)
	v := version(t, pool)

	// The endpoint recovers; the next sync does only what is missing.
	fake.failEmbedAt = 0
	st, err := catalog.Sync(ctx, pool, catalog.SyncOptions{Embedder: emb, ChunkSize: 4})
	require.NoError(t, err)
	require.Equal(t, 4, st.Rebuilt)
	require.Equal(t, 8, st.Unchanged)
	require.Greater(t, version(t, pool), v)
	requireNoHalfWrittenTables(t, pool)
	var name string
	require.NoError(t, pool.QueryRow(ctx, "SELECT embedder FROM atrium.catalog_state").Scan(&name))
	require.Equal(t, "openai:fake-embed", name)
}

func TestEmbedderChangeReembedsOnce(t *testing.T) {
	ctx := testCtx(t)
	pool := newPool(t, testdb.New(t))
	mustExec(t, pool, `CREATE TABLE a (id int PRIMARY KEY, v text)`, `CREATE TABLE b (id int, a_id int)`)
	_, err := catalog.Sync(ctx, pool, catalog.SyncOptions{AutoMigrate: true})
	require.NoError(t, err)
	st, err := catalog.Sync(ctx, pool, catalog.SyncOptions{Embedder: catalog.NewBuiltinEmbedder(64)})
	require.NoError(t, err)
	require.Equal(t, 0, st.Rebuilt)
	require.Equal(t, 2, st.Reembedded)
	require.Equal(t, int64(2), queryInt(t, pool, `SELECT count(*) FROM atrium.tables WHERE vector_dims(embedding) = 64`))
	require.Equal(t, int64(4), queryInt(t, pool, `SELECT count(*) FROM atrium.columns WHERE vector_dims(embedding) = 64`))
	require.Equal(t, int64(64), queryInt(t, pool, `SELECT dimension FROM atrium.catalog_state`))
	// The HNSW index exists for the new type and serves the retriever's query.
	require.Equal(t, int64(1), queryInt(t, pool, `SELECT count(*) FROM pg_indexes WHERE schemaname = 'atrium' AND indexdef LIKE '%hnsw%vector_cosine_ops%'`))
	st, err = catalog.Sync(ctx, pool, catalog.SyncOptions{Embedder: catalog.NewBuiltinEmbedder(64)})
	require.NoError(t, err)
	require.Equal(t, 0, st.Reembedded)
}

func TestLLMDescriptionsAreCachedAndRetried(t *testing.T) {
	ctx := testCtx(t)
	pool := newPool(t, testdb.New(t))
	mustExec(t, pool,
		`CREATE TABLE players (player_id int PRIMARY KEY, ab int, babip real)`,
		`CREATE TABLE teams (team_id int PRIMARY KEY, name text)`,
		`CREATE TABLE slow_table (id int PRIMARY KEY)`,
		`CREATE TABLE broken_table (id int PRIMARY KEY)`)
	fake := newFakeOpenAI(t)
	fake.chatHook = func(prompt string) (int, bool) {
		switch {
		case strings.Contains(prompt, "slow_table"):
			return 0, true // never answers; the per-call timeout ends it
		case strings.Contains(prompt, "broken_table"):
			return 500, false
		}
		return 0, false
	}
	llm, err := catalog.NewLLMDescriber(catalog.LLMConfig{URL: fake.url(), Model: "fake-chat", Concurrency: 2})
	require.NoError(t, err)
	opts := catalog.SyncOptions{AutoMigrate: true, LLM: llm, LLMTimeout: 500 * time.Millisecond}
	st, err := catalog.Sync(ctx, pool, opts)
	require.NoError(t, err)
	require.Equal(t, 4, st.Rebuilt)
	require.Equal(t, 2, st.Described)
	require.Equal(t, 2, st.DescribeFailed)

	var purpose, commentText, doc, desc string
	require.NoError(t, pool.QueryRow(ctx, `SELECT t.purpose, t.comment_text, t.document, c.description
		FROM atrium.tables t JOIN atrium.columns c ON c.table_id = t.id AND c.column_name = 'babip'
		WHERE t.table_name = 'players'`).Scan(&purpose, &commentText, &doc, &desc))
	require.Contains(t, purpose, "Purpose of public.players")
	require.Equal(t, "narrated babip", desc)
	require.Contains(t, commentText, "narrated babip")
	require.Contains(t, doc, "babip (real): narrated babip")
	require.Contains(t, doc, "Purpose: Purpose of public.players")
	require.Equal(t, int64(2), queryInt(t, pool, `SELECT count(*) FROM atrium.tables WHERE llm_fingerprint = ''`))

	// Next sync: described tables are cached; the failed ones are retried.
	fake.chatHook = nil
	calls := fake.chatCalls.Load()
	st, err = catalog.Sync(ctx, pool, opts)
	require.NoError(t, err)
	require.Equal(t, 2, st.Rebuilt)
	require.Equal(t, 2, st.Described)
	require.Equal(t, calls+2, fake.chatCalls.Load())
	require.Equal(t, int64(0), queryInt(t, pool, `SELECT count(*) FROM atrium.tables WHERE llm_fingerprint = '' OR purpose IS NULL`))

	// A forced rebuild reuses cached descriptions: no LLM calls.
	calls = fake.chatCalls.Load()
	opts.Force = true
	st, err = catalog.Sync(ctx, pool, opts)
	require.NoError(t, err)
	require.Equal(t, 4, st.Rebuilt)
	require.Equal(t, calls, fake.chatCalls.Load())
	require.NoError(t, pool.QueryRow(ctx, `SELECT c.description FROM atrium.columns c JOIN atrium.tables t ON t.id = c.table_id
		WHERE t.table_name = 'players' AND c.column_name = 'ab'`).Scan(&desc))
	require.Equal(t, "narrated ab", desc)
}

func TestWatchFollowsDDL(t *testing.T) {
	ctx, cancel := context.WithCancel(testCtx(t))
	pool := newPool(t, testdb.New(t))
	mustExec(t, pool, `CREATE TABLE first_table (id int)`)
	syncs := make(chan error, 16)
	done := make(chan error, 1)
	go func() {
		done <- catalog.Watch(ctx, pool, catalog.WatchOptions{
			Sync:     catalog.SyncOptions{AutoMigrate: true},
			Interval: time.Hour, Debounce: 50 * time.Millisecond,
			OnSync: func(_ catalog.SyncStats, err error) { syncs <- err },
		})
	}()
	require.NoError(t, <-syncs)
	require.Equal(t, int64(1), queryInt(t, pool, `SELECT count(*) FROM atrium.tables WHERE table_name = 'first_table'`))
	// The LISTEN connection may start just after the first sync: wait for it.
	require.Eventually(t, func() bool {
		return queryInt(t, pool, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'`) > 0
	}, time.Minute, 20*time.Millisecond)
	mustExec(t, pool, `CREATE TABLE second_table (id int, note text)`)
	require.NoError(t, <-syncs)
	require.Equal(t, int64(1), queryInt(t, pool, `SELECT count(*) FROM atrium.tables WHERE table_name = 'second_table'`))
	cancel()
	require.True(t, errors.Is(<-done, context.Canceled))
}
