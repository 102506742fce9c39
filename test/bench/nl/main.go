// Command nl measures, in one run, the latency of `SELECT 1` through Atrium,
// of a cached natural-language question, and of an uncached one answered by
// an instant fake LLM (a test double), over the real proxy, real PostgreSQL,
// the real catalog and retriever. It prints p50/p95 per kind and the ratios
// to `SELECT 1` measured in the same run.
//
// Two workloads:
//
//   - default: one question about a small shop, asked -n times (uncached
//     runs vary the question's text so each misses the cache);
//
//   - -spider DIR: the Spider dev databases (DIR holds tables.json, dev.json
//     and databases/) loaded one schema per db_id and catalogued, and every
//     dev question whose gold SQL PostgreSQL accepts asked through the
//     proxy with the session's search_path set to its database; the fake
//     LLM answers each question with its gold SQL at once. Per-stage
//     figures come from the pipeline's own per-question records.
//
//     go run ./test/bench/nl [-n 500] [-redis redis://127.0.0.1:6379/0]
//     go run ./test/bench/nl -spider /work/shared/bench/spider [-questions 300]
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/atriumdb/atrium/catalog"
	"github.com/atriumdb/atrium/proxy"
	"github.com/atriumdb/atrium/proxy/resultcache"
	"github.com/atriumdb/atrium/question"
	"github.com/atriumdb/atrium/retriever"
	"github.com/atriumdb/atrium/retriever/vocab"
	"github.com/atriumdb/atrium/sqlgen"
	"github.com/atriumdb/atrium/test/llmfake"
)

const fixture = `
CREATE SCHEMA shop;
CREATE TABLE shop.customers (id bigint PRIMARY KEY, name text NOT NULL, country text);
COMMENT ON TABLE shop.customers IS 'customers of the online shop';
CREATE TABLE shop.orders (id bigint PRIMARY KEY, customer_id bigint NOT NULL REFERENCES shop.customers, amount numeric(10,2) NOT NULL);
COMMENT ON TABLE shop.orders IS 'orders placed by customers';
INSERT INTO shop.customers SELECT g, 'customer ' || g, (ARRAY['Aruba','Chile','Peru'])[1 + g % 3] FROM generate_series(1, 200) g;
INSERT INTO shop.orders SELECT g, 1 + g % 200, g FROM generate_series(1, 2000) g;
`

const shopQuestion = "how many orders per country"
const answer = "SELECT c.country, count(*) AS orders FROM shop.orders o JOIN shop.customers c ON c.id = o.customer_id GROUP BY c.country ORDER BY c.country"

func main() {
	n := flag.Int("n", 500, "iterations per kind (shop workload; SELECT 1 in both)")
	admin := flag.String("dsn", envOr("ATRIUM_TEST_PG", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"), "maintenance database of the PostgreSQL server to use")
	redisURL := flag.String("redis", "", "use this Redis for the cache (default: the in-process cache)")
	spider := flag.String("spider", "", "Spider `dir` (tables.json, dev.json, databases/): ask the dev questions instead of the shop's")
	questions := flag.Int("questions", 0, "with -spider: ask at most this many dev questions (0: all whose gold SQL PostgreSQL accepts)")
	flag.Parse()
	var err error
	if *spider != "" {
		err = runSpider(*n, *admin, *redisURL, *spider, *questions)
	} else {
		err = run(*n, *admin, *redisURL)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench nl:", err)
		os.Exit(1)
	}
}

func envOr(k, d string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return d
}

// benchDB creates a scratch database and returns its DSN and a function
// that drops it.
func benchDB(ctx context.Context, adminDSN string) (string, func(), error) {
	admin, err := pgx.Connect(ctx, adminDSN)
	if err != nil {
		return "", nil, fmt.Errorf("connect: %w", err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "atrium_bench_nl_" + hex.EncodeToString(b[:])
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		admin.Close(ctx)
		return "", nil, err
	}
	drop := func() {
		_, _ = admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		admin.Close(context.Background())
	}
	u, err := url.Parse(adminDSN)
	if err != nil {
		drop()
		return "", nil, err
	}
	u.Path = "/" + name
	return u.String(), drop, nil
}

// stack is Atrium's proxy with the NL pipeline in front of the bench
// database.
type stack struct {
	conn  *pgx.Conn // a client session through the proxy
	cache string    // what caches results

	mu      sync.Mutex
	records []sqlgen.QuestionRecord
}

// startStack builds retriever, pipeline, cache and proxy over the
// catalogued database dbDSN and connects one client. llmURL is the fake
// LLM. The returned function stops everything.
func startStack(ctx context.Context, pool *pgxpool.Pool, dbDSN, llmURL, redisURL string, emb catalog.Embedder) (*stack, func(), error) {
	st := &stack{cache: "in-process LRU"}
	var cleanups []func()
	stop := func() {
		for i := len(cleanups) - 1; i >= 0; i-- {
			cleanups[i]()
		}
	}
	ret, err := retriever.New(pool, retriever.Config{}, retriever.Options{Embedder: emb})
	if err != nil {
		return nil, stop, err
	}
	gen, err := sqlgen.NewOpenAI(sqlgen.OpenAIConfig{URL: llmURL, Model: "fake"}, sqlgen.OpenAIOptions{})
	if err != nil {
		return nil, stop, err
	}
	var store resultcache.Store = resultcache.NewLRU(256<<20, nil)
	if redisURL != "" {
		c, err := resultcache.OpenRedis(redisURL)
		if err != nil {
			return nil, stop, err
		}
		store, st.cache = resultcache.NewRedis(c), "Redis "+redisURL
	}
	cache := resultcache.New(resultcache.Config{}, store, resultcache.Options{})
	cleanups = append(cleanups, func() { _ = cache.Close() })
	p, err := question.New(question.Config{NL: sqlgen.Config{Model: "fake"}}, question.Options{
		Retriever: ret, Generator: gen, Cache: cache, Versions: sqlgen.NewCatalogVersion(pool, 0),
		OnQuestion: func(_ context.Context, r sqlgen.QuestionRecord) {
			st.mu.Lock()
			st.records = append(st.records, r)
			st.mu.Unlock()
		},
	})
	if err != nil {
		return nil, stop, err
	}
	u, err := url.Parse(dbDSN)
	if err != nil {
		return nil, stop, err
	}
	srv, err := proxy.NewServer(proxy.Config{Upstream: u.Host, UpstreamSSLMode: "disable"}, proxy.Options{
		Handler: proxy.Handlers{p}, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		return nil, stop, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, stop, err
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background(), l) }()
	cleanups = append(cleanups, func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		<-done
	})
	pu := *u
	pu.Host = l.Addr().String()
	if st.conn, err = pgx.Connect(ctx, pu.String()); err != nil {
		return nil, stop, err
	}
	cleanups = append(cleanups, func() { st.conn.Close(context.Background()) })
	return st, stop, nil
}

// exec runs sql through the simple protocol and reads every row.
func (st *stack) exec(ctx context.Context, sql string) error {
	rows, err := st.conn.Query(ctx, sql, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return err
	}
	for rows.Next() {
	}
	return rows.Err()
}

// takeRecords returns and clears the pipeline's question records.
func (st *stack) takeRecords() []sqlgen.QuestionRecord {
	st.mu.Lock()
	defer st.mu.Unlock()
	r := st.records
	st.records = nil
	return r
}

// measureSelect1 times n SELECT 1 round trips through the proxy.
func (st *stack) measureSelect1(ctx context.Context, n int) ([]time.Duration, error) {
	for range 20 {
		if err := st.exec(ctx, "SELECT 1"); err != nil {
			return nil, err
		}
	}
	ds := make([]time.Duration, 0, n)
	for range n {
		t0 := time.Now()
		if err := st.exec(ctx, "SELECT 1"); err != nil {
			return nil, err
		}
		ds = append(ds, time.Since(t0))
	}
	slices.Sort(ds)
	return ds, nil
}

func run(n int, adminDSN, redisURL string) error {
	ctx := context.Background()
	dbDSN, drop, err := benchDB(ctx, adminDSN)
	if err != nil {
		return err
	}
	defer drop()
	pool, err := pgxpool.New(ctx, dbDSN)
	if err != nil {
		return err
	}
	defer pool.Close()
	if _, err := pool.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS vector; CREATE EXTENSION IF NOT EXISTS pg_trgm;"+fixture); err != nil {
		return fmt.Errorf("fixture: %w", err)
	}
	// The embedder Atrium defaults to, which the shipped scorer was
	// trained with.
	emb, err := vocab.NewDefaultEmbedder()
	if err != nil {
		return err
	}
	if _, err := catalog.Sync(ctx, pool, catalog.SyncOptions{Embedder: emb, AutoMigrate: true, Schemas: []string{"shop"}}); err != nil {
		return fmt.Errorf("catalog sync: %w", err)
	}
	llm := llmfake.Start(llmfake.Rule{Question: shopQuestion, SQL: answer})
	defer llm.Close()
	st, stop, err := startStack(ctx, pool, dbDSN, llm.URL(), redisURL, emb)
	defer stop()
	if err != nil {
		return err
	}

	measure := func(sqlFor func(i int) string) ([]time.Duration, error) {
		// Warm-up: connections, caches, the catalog snapshot.
		for i := range 20 {
			if err := st.exec(ctx, sqlFor(-1-i)); err != nil {
				return nil, err
			}
		}
		ds := make([]time.Duration, 0, n)
		for i := range n {
			t0 := time.Now()
			if err := st.exec(ctx, sqlFor(i)); err != nil {
				return nil, err
			}
			ds = append(ds, time.Since(t0))
		}
		slices.Sort(ds)
		return ds, nil
	}
	sel, err := st.measureSelect1(ctx, n)
	if err != nil {
		return err
	}
	cached, err := measure(func(int) string { return "/* nl: " + shopQuestion + " */" })
	if err != nil {
		return err
	}
	st.takeRecords()
	uncached, err := measure(func(i int) string { return fmt.Sprintf("/* nl: %s (variant %d) */", shopQuestion, i) })
	if err != nil {
		return err
	}
	fmt.Printf("NL benchmark (shop): %d iterations per kind, cache: %s, fake LLM answering instantly\n", n, st.cache)
	printTable(sel, []kindTimes{{"NL question, cached", cached}, {"NL question, uncached", uncached}})
	printStages(st.takeRecords())
	return nil
}

// kindTimes are one kind's sorted latencies.
type kindTimes struct {
	name string
	ds   []time.Duration
}

func pct(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	return ds[int(q*float64(len(ds)-1))]
}

func printTable(sel []time.Duration, kinds []kindTimes) {
	fmt.Printf("%-30s %7s %12s %12s %12s %12s\n", "kind", "n", "p50", "p95", "p50/SELECT1", "p95/SELECT1")
	for _, k := range append([]kindTimes{{"SELECT 1 through Atrium", sel}}, kinds...) {
		fmt.Printf("%-30s %7d %12s %12s %11.2fx %11.2fx\n", k.name, len(k.ds), round(pct(k.ds, .5)), round(pct(k.ds, .95)),
			float64(pct(k.ds, .5))/float64(pct(sel, .5)), float64(pct(k.ds, .95))/float64(pct(sel, .95)))
	}
}

// printStages summarises the uncached questions' own stage timings: the
// overhead Atrium adds outside the LLM is total minus the llm stage.
func printStages(recs []sqlgen.QuestionRecord) {
	var outside, outsideExec []time.Duration
	stages := map[string][]time.Duration{}
	for _, r := range recs {
		if r.Err != nil || r.CacheTier != "" {
			continue
		}
		for k, d := range r.Stages {
			stages[k] = append(stages[k], d)
		}
		outside = append(outside, r.Total-r.Stages["llm"])
		outsideExec = append(outsideExec, r.Total-r.Stages["llm"]-r.Stages["execute"])
	}
	if len(outside) == 0 {
		return
	}
	fmt.Printf("uncached questions, pipeline stages (n=%d):\n", len(outside))
	fmt.Printf("  %-28s %12s %12s\n", "stage", "p50", "p95")
	for _, k := range []string{"retrieve", "sample", "llm", "validate", "execute"} {
		ds := stages[k]
		slices.Sort(ds)
		fmt.Printf("  %-28s %12s %12s\n", k, round(pct(ds, .5)), round(pct(ds, .95)))
	}
	slices.Sort(outside)
	slices.Sort(outsideExec)
	fmt.Printf("  %-28s %12s %12s\n", "total outside the LLM", round(pct(outside, .5)), round(pct(outside, .95)))
	fmt.Printf("  %-28s %12s %12s   (goal: p50 < 25ms)\n", "  of which not execution", round(pct(outsideExec, .5)), round(pct(outsideExec, .95)))
}

func round(d time.Duration) time.Duration {
	switch {
	case d > time.Millisecond:
		return d.Round(10 * time.Microsecond)
	default:
		return d.Round(time.Microsecond)
	}
}
