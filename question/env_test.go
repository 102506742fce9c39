package question

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/catalog"
	"github.com/atriumdb/atrium/proxy"
	"github.com/atriumdb/atrium/proxy/resultcache"
	"github.com/atriumdb/atrium/retriever"
	"github.com/atriumdb/atrium/retriever/vocab"
	"github.com/atriumdb/atrium/sqlgen"
	"github.com/atriumdb/atrium/test/llmfake"
	"github.com/atriumdb/atrium/test/testdb"
)

// env is the question layer behind a real proxy in front of a throwaway
// database with a real catalog (the default embedder, real retriever); only the
// LLM is a test double (test/llmfake).
type env struct {
	db   string // DSN of the database, as superuser
	pool *pgxpool.Pool
	ret  *retriever.Retriever
	llm  *llmfake.Server
	h    *Handler
	addr net.Addr
}

type envOpts struct {
	fixture string
	schemas []string
	rules   []llmfake.Rule
	noLLM   bool
	// store is the result cache's store; nil means an in-process LRU.
	store resultcache.Store
	// onQuestion and logger, when set, are the Handler's.
	onQuestion func(context.Context, sqlgen.QuestionRecord)
	logger     *slog.Logger
	// wrap, when set, wraps the real retriever in the Handler's Retriever
	// (a test double adding examples and glossary terms).
	wrap func(r Retriever, pool *pgxpool.Pool) Retriever
	// configure, when set, adjusts the Handler's Config and Options last.
	configure func(*Config, *Options)
}

func newEnv(t *testing.T, o envOpts) *env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if o.fixture == "" {
		o.fixture, o.schemas = testdb.ShopSchema, []string{"shop", "zoo"}
	}
	e := &env{db: testdb.New(t, "vector", "pg_trgm")}
	pool, err := pgxpool.New(ctx, e.db)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	e.pool = pool
	_, err = pool.Exec(ctx, o.fixture)
	require.NoError(t, err)
	// The embedder the shipped scorer was trained with.
	emb, err := vocab.NewDefaultEmbedder()
	require.NoError(t, err)
	_, err = catalog.Sync(ctx, pool, catalog.SyncOptions{Embedder: emb, AutoMigrate: true, Schemas: o.schemas})
	require.NoError(t, err)
	e.ret, err = retriever.New(pool, retriever.Config{}, retriever.Options{Embedder: emb})
	require.NoError(t, err)

	opts := Options{Retriever: e.ret, Versions: sqlgen.NewCatalogVersion(pool, -1)}
	if o.wrap != nil {
		opts.Retriever = o.wrap(e.ret, pool)
	}
	e.llm = llmfake.Start(o.rules...)
	t.Cleanup(e.llm.Close)
	if !o.noLLM {
		g, err := sqlgen.NewOpenAI(sqlgen.OpenAIConfig{URL: e.llm.URL(), Model: "fake", Timeout: 20 * time.Second}, sqlgen.OpenAIOptions{})
		require.NoError(t, err)
		opts.Generator = g
	}
	store := o.store
	if store == nil {
		store = resultcache.NewLRU(16<<20, nil)
	}
	cache := resultcache.New(resultcache.Config{}, store, resultcache.Options{})
	t.Cleanup(func() { _ = cache.Close() })
	opts.Cache = cache
	opts.OnQuestion, opts.Logger = o.onQuestion, o.logger
	cfg := Config{NL: sqlgen.Config{Model: "fake"}}
	if o.configure != nil {
		o.configure(&cfg, &opts)
	}
	e.h, err = New(cfg, opts)
	require.NoError(t, err)

	cc := pool.Config().ConnConfig
	srv, err := proxy.NewServer(proxy.Config{Upstream: net.JoinHostPort(cc.Host, fmt.Sprint(cc.Port)), UpstreamSSLMode: "disable"},
		proxy.Options{Handler: e.h})
	require.NoError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	e.addr = l.Addr()
	sctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sctx, l) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil && !errors.Is(err, proxy.ErrServerClosed) {
			t.Errorf("proxy: %v", err)
		}
	})
	return e
}

// client is a session through the proxy that keeps the notices it got.
type client struct {
	*pgx.Conn
	mu      sync.Mutex
	notices []string // message, then detail when set
}

// connect opens a client session through the proxy as user.
func (e *env) connect(t *testing.T, user string) *client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dbname := e.pool.Config().ConnConfig.Database
	cfg, err := pgx.ParseConfig(fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable", user, e.addr, dbname))
	require.NoError(t, err)
	c := &client{}
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.notices = append(c.notices, n.Message+"\n"+n.Detail)
	}
	c.Conn, err = pgx.ConnectConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// newRole creates a login role with the grants (where %[1]s is the role),
// dropped at the end of the test.
func (e *env) newRole(t *testing.T, grants string) string {
	t.Helper()
	role := fmt.Sprintf("atrium_q_%d", rand.Uint32())
	_, err := e.pool.Exec(context.Background(), fmt.Sprintf("CREATE ROLE %[1]s LOGIN; "+grants, role))
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx := context.Background()
		_, _ = e.pool.Exec(ctx, "DROP OWNED BY "+role)
		_, _ = e.pool.Exec(ctx, "DROP ROLE "+role)
	})
	return role
}

// answer is what a client received for one question.
type answer struct {
	rows    [][]string
	notices []string
	err     *pgconn.PgError
}

// ask sends sql through the simple protocol and collects rows, notices and
// the error.
func (c *client) ask(t *testing.T, sql string) answer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var a answer
	c.mu.Lock()
	c.notices = nil
	c.mu.Unlock()
	res := c.PgConn().Exec(ctx, sql)
	for res.NextResult() {
		rr := res.ResultReader()
		for rr.NextRow() {
			row := make([]string, len(rr.Values()))
			for i, v := range rr.Values() {
				row[i] = string(v)
			}
			a.rows = append(a.rows, row)
		}
		_, _ = rr.Close()
	}
	err := res.Close()
	if err != nil {
		require.ErrorAs(t, err, &a.err, "not a server error: %v", err)
	}
	c.mu.Lock()
	a.notices = append(a.notices, c.notices...)
	c.mu.Unlock()
	return a
}

// rowSink collects a Statement's rows in-process.
type rowSink struct {
	rows [][]string
}

func (s *rowSink) Notice(*pgproto3.NoticeResponse) error    { return nil }
func (s *rowSink) Fields([]pgproto3.FieldDescription) error { return nil }
func (s *rowSink) Row(v [][]byte) error {
	row := make([]string, len(v))
	for i, b := range v {
		row[i] = string(b)
	}
	s.rows = append(s.rows, row)
	return nil
}
