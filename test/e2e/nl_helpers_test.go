package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/catalog"
	"github.com/atriumdb/atrium/proxy"
	"github.com/atriumdb/atrium/proxy/resultcache"
	"github.com/atriumdb/atrium/question"
	"github.com/atriumdb/atrium/retriever"
	"github.com/atriumdb/atrium/retriever/vocab"
	"github.com/atriumdb/atrium/sqlgen"
	"github.com/atriumdb/atrium/test/llmfake"
	"github.com/atriumdb/atrium/test/testdb"
)

// nlFixture is a small shop the NL tests ask questions about.
const nlFixture = `
CREATE SCHEMA shop;
CREATE TABLE shop.customers (id bigint PRIMARY KEY, name text NOT NULL, country text);
COMMENT ON TABLE shop.customers IS 'customers of the online shop';
COMMENT ON COLUMN shop.customers.country IS 'country of the billing address';
CREATE TABLE shop.orders (id bigint PRIMARY KEY, customer_id bigint NOT NULL REFERENCES shop.customers, amount numeric(10,2) NOT NULL, placed_at date NOT NULL);
COMMENT ON TABLE shop.orders IS 'orders placed by customers';
INSERT INTO shop.customers VALUES (1, 'Ann', 'Aruba'), (2, 'Bob', 'Chile'), (3, 'Cy', 'Aruba');
INSERT INTO shop.orders SELECT g, 1 + g % 3, g * 10, date '2024-01-01' + g FROM generate_series(1, 30) g;
`

// The fake LLM's scripted answers (a test double: it matches the question).
const (
	sqlOrdersPerCountry = "SELECT c.country, count(*) AS orders, sum(o.amount) AS revenue FROM shop.orders o JOIN shop.customers c ON c.id = o.customer_id GROUP BY c.country ORDER BY c.country"
	sqlCustomerNames    = "SELECT name FROM shop.customers ORDER BY id"
)

func nlRules() []llmfake.Rule {
	return []llmfake.Rule{
		{Question: "orders per country", SQL: sqlOrdersPerCountry},
		{Question: "customer names", SQL: sqlCustomerNames},
		{Question: "slow customers", SQL: "SELECT pg_sleep(60) AS slept FROM shop.customers LIMIT 1"},
		{Question: "drop the orders", SQL: "DROP TABLE shop.orders"},
		{Question: "two statements about customers", SQL: "SELECT 1; DELETE FROM shop.customers"},
		{Question: "garbage about customers", Raw: "Sorry, as a language model I cannot do that."},
		{Question: "sleepy llm about customers", SQL: "SELECT 1", Delay: time.Minute},
		{Question: "all orders", SQL: "SELECT id, amount FROM shop.orders ORDER BY id"},
	}
}

// nlEnv is a proxy with the NL pipeline in front of a database holding the
// shop and its real catalog (synced with the default embedder, retrieved by
// the real retriever); only the LLM is a test double.
type nlEnv struct {
	db    string
	admin *pgx.Conn
	llm   *llmfake.Server
	cache *resultcache.Cache
	reg   *prometheus.Registry
	q     *question.Handler
	px    *testProxy
}

type nlOpts struct {
	cfg      sqlgen.Config
	cacheCfg resultcache.Config
	// store is the cache store; nil means an in-process LRU.
	store resultcache.Store
	// llmTimeout bounds one generation (default 10s).
	llmTimeout time.Duration
	// noLLM starts without a generator.
	noLLM bool
	// proxyCfg configures the proxy (its Upstream is filled in).
	proxyCfg proxy.Config
	// extraFixture runs after nlFixture, and extraSchemas are catalogued
	// besides shop: for tests that need a second topic.
	extraFixture string
	extraSchemas []string
}

func startNL(t *testing.T, o nlOpts) *nlEnv {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	db := testdb.New(t, "vector", "pg_trgm")
	admin, err := pgx.Connect(ctx, db)
	require.NoError(t, err)
	t.Cleanup(func() { admin.Close(context.Background()) })
	_, err = admin.Exec(ctx, nlFixture+o.extraFixture)
	require.NoError(t, err)

	pool, err := pgxpool.New(ctx, db)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	// The embedder the shipped scorer was trained with.
	emb, err := vocab.NewDefaultEmbedder()
	require.NoError(t, err)
	_, err = catalog.Sync(ctx, pool, catalog.SyncOptions{Embedder: emb, AutoMigrate: true, Schemas: append([]string{"shop"}, o.extraSchemas...)})
	require.NoError(t, err)
	ret, err := retriever.New(pool, retriever.Config{}, retriever.Options{Embedder: emb})
	require.NoError(t, err)

	e := &nlEnv{db: db, admin: admin, reg: prometheus.NewRegistry()}
	e.llm = llmfake.Start(nlRules()...)
	t.Cleanup(e.llm.Close)
	var gen sqlgen.Generator
	if !o.noLLM {
		if o.llmTimeout == 0 {
			o.llmTimeout = 10 * time.Second
		}
		g, err := sqlgen.NewOpenAI(sqlgen.OpenAIConfig{URL: e.llm.URL(), Model: "fake", Timeout: o.llmTimeout}, sqlgen.OpenAIOptions{})
		require.NoError(t, err)
		gen = g
	}
	store := o.store
	if store == nil {
		store = resultcache.NewLRU(16<<20, nil)
	}
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	e.cache = resultcache.New(o.cacheCfg, store, resultcache.Options{Logger: log, Registerer: e.reg})
	t.Cleanup(func() { _ = e.cache.Close() })
	if o.cfg.Model == "" {
		o.cfg.Model = "fake"
	}
	e.q, err = question.New(question.Config{NL: o.cfg}, question.Options{
		Retriever: ret, Generator: gen, Cache: e.cache,
		Versions: sqlgen.NewCatalogVersion(pool, -1), Logger: log, Registerer: e.reg,
	})
	require.NoError(t, err)
	e.px = startProxy(t, proxyOpts{cfg: o.proxyCfg, handler: proxy.Handlers{proxy.VersionHandler("test-version"), e.q}})
	return e
}

// dsn is a DSN through the proxy, optionally as another user.
func (e *nlEnv) dsn(t *testing.T, extra ...string) string {
	return e.px.dsn(t, e.db, extra...)
}

func (e *nlEnv) connect(t *testing.T, extra ...string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, e.dsn(t, extra...))
	require.NoError(t, err)
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// metric reads a counter of the env's registry.
func (e *nlEnv) metric(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := e.reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if v, ok := labels[lp.GetName()]; ok && v != lp.GetValue() {
					continue next
				}
			}
			return m.GetCounter().GetValue()
		}
	}
	return 0
}

// newRole creates a login role for one test, dropped at the end.
func (e *nlEnv) newRole(t *testing.T, grants string) string {
	t.Helper()
	name := fmt.Sprintf("atrium_nl_%d", time.Now().UnixNano())
	if grants != "" {
		grants = fmt.Sprintf(grants, name)
	}
	_, err := e.admin.Exec(context.Background(), fmt.Sprintf("CREATE ROLE %s LOGIN; GRANT USAGE ON SCHEMA shop TO %[1]s; %s", name, grants))
	require.NoError(t, err)
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), e.db)
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		_, _ = c.Exec(context.Background(), fmt.Sprintf("DROP OWNED BY %s; DROP ROLE %[1]s", name))
	})
	return name
}

// mustDefaultEmbedder is the embedder atrium serve uses by default (the
// one the shipped scorer was trained with), for catalogs the tests sync
// before they start it.
// nlCatalogDB is a new database holding nlFixture's shop schema,
// catalogued with the default embedder, and a pool on it (closed when the
// test ends): what a `atrium serve` process under test reads.
func nlCatalogDB(ctx context.Context, t *testing.T) (string, *pgxpool.Pool) {
	t.Helper()
	db := testdb.New(t, "vector", "pg_trgm")
	pool, err := pgxpool.New(ctx, db)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	_, err = pool.Exec(ctx, nlFixture)
	require.NoError(t, err)
	_, err = catalog.Sync(ctx, pool, catalog.SyncOptions{Embedder: mustDefaultEmbedder(t), AutoMigrate: true, Schemas: []string{"shop"}})
	require.NoError(t, err)
	return db, pool
}

func mustDefaultEmbedder(t *testing.T) catalog.Embedder {
	t.Helper()
	emb, err := vocab.NewDefaultEmbedder()
	require.NoError(t, err)
	return emb
}
