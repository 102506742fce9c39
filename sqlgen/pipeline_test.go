package sqlgen

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/proxy"
	"github.com/atriumdb/atrium/proxy/resultcache"
	"github.com/atriumdb/atrium/test/llmfake"
	"github.com/atriumdb/atrium/test/testdb"
)

const fixture = `
CREATE SCHEMA shop;
COMMENT ON SCHEMA shop IS 'online shop';
CREATE TABLE shop.customers (id bigint PRIMARY KEY, name text NOT NULL, country text);
COMMENT ON TABLE shop.customers IS 'people who bought something';
COMMENT ON COLUMN shop.customers.country IS 'country of the billing address';
CREATE TABLE shop.orders (id bigint PRIMARY KEY, customer_id bigint NOT NULL REFERENCES shop.customers, amount numeric(10,2) NOT NULL);
INSERT INTO shop.customers VALUES (1, 'Ann', 'Aruba'), (2, 'Bob', 'Chile'), (3, 'Cy', 'Aruba');
INSERT INTO shop.orders SELECT g, 1 + g % 3, g * 10 FROM generate_series(1, 30) g;
CREATE SCHEMA atrium;
CREATE TABLE atrium.catalog_state (id boolean PRIMARY KEY DEFAULT true, version bigint NOT NULL, learning_version bigint NOT NULL DEFAULT 0);
INSERT INTO atrium.catalog_state VALUES (true, 1);
`

// staticRetriever is a test Retriever that always chooses the shop tables;
// learn, when set, adds examples and glossary terms for a question.
type staticRetriever struct {
	calls atomic.Int64
	learn func(a Ask, r *Retrieval)
}

func (r *staticRetriever) Retrieve(_ context.Context, _ proxy.Upstream, a Ask) (*Retrieval, error) {
	r.calls.Add(1)
	question := a.Question
	res := &Retrieval{
		Tables: []Table{
			{Schema: "shop", Name: "customers", Comment: "people who bought something", Score: 2.5, Reason: "lexical",
				Columns: []Column{{Name: "id", Type: "bigint", PrimaryKey: true, NotNull: true}, {Name: "name", Type: "text", NotNull: true}, {Name: "country", Type: "text", Comment: "country of the billing address"}}},
			{Schema: "shop", Name: "orders", Score: 1.5, Reason: "join",
				Columns: []Column{{Name: "id", Type: "bigint", PrimaryKey: true, NotNull: true}, {Name: "customer_id", Type: "bigint", NotNull: true}, {Name: "amount", Type: "numeric(10,2)", NotNull: true}}},
		},
		Joins: []Join{{Left: "shop.orders.customer_id", Right: "shop.customers.id"}},
	}
	if strings.Contains(question, "Aruba") {
		res.Values = []ValueMatch{{Schema: "shop", Table: "customers", Column: "country", Value: "Aruba"}}
	}
	res.Previous = a.Previous
	if r.learn != nil {
		r.learn(a, res)
	}
	return res, nil
}

type env struct {
	dsn   string
	llm   *llmfake.Server
	ret   *staticRetriever
	cache *resultcache.Cache
	p     *Pipeline
	admin *pgx.Conn
}

func newEnv(t *testing.T, cfg Config, rules ...llmfake.Rule) *env {
	t.Helper()
	dsn := testdb.New(t)
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	t.Cleanup(func() { admin.Close(context.Background()) })
	_, err = admin.Exec(ctx, fixture)
	require.NoError(t, err)

	llm := llmfake.Start(rules...)
	t.Cleanup(llm.Close)
	gen, err := NewOpenAI(OpenAIConfig{URL: llm.URL(), Model: "fake", Timeout: 5 * time.Second, MaxRetries: 1},
		OpenAIOptions{Sleep: func(context.Context, time.Duration) error { return nil }})
	require.NoError(t, err)
	e := &env{dsn: dsn, llm: llm, ret: &staticRetriever{}, admin: admin}
	e.cache = resultcache.New(resultcache.Config{}, resultcache.NewLRU(8<<20, nil), resultcache.Options{})
	if cfg.Model == "" {
		cfg.Model = "fake"
	}
	e.p, err = New(cfg, Options{Retriever: e.ret, Generator: gen, Cache: e.cache, Versions: NewCatalogVersion(admin, -1)})
	require.NoError(t, err)
	return e
}

// ask drives a Statement as the proxy's simple-protocol path does.
func ask(t *testing.T, p *Pipeline, up proxy.Upstream, sql string) (*collector, string, error) {
	t.Helper()
	return askCtx(context.Background(), t, p, up, sql)
}

func askCtx(ctx context.Context, t *testing.T, p *Pipeline, up proxy.Upstream, sql string) (*collector, string, error) {
	t.Helper()
	st := statementFor(p, proxy.SessionInfo{User: "postgres", TxStatus: up.TxStatus()}, sql)
	c := &collector{}
	fds, err := st.Describe(ctx, up)
	if err != nil {
		return c, "", err
	}
	c.fields = fds
	tag, err := st.Execute(ctx, up, c)
	return c, tag, err
}

func requireCode(t *testing.T, err error, code string) {
	t.Helper()
	require.Error(t, err)
	var pe *proxy.Error
	var ue *proxy.UpstreamError
	switch {
	case errors.As(err, &pe):
		require.Equal(t, code, pe.Code, "error: %v", err)
	case errors.As(err, &ue):
		require.Equal(t, code, ue.Code, "error: %v", err)
	default:
		t.Fatalf("error %v (%T) carries no SQLSTATE, want %s", err, err, code)
	}
}

func requireUsable(t *testing.T, up *pgUpstream, status byte) {
	t.Helper()
	require.Equal(t, status, up.TxStatus())
	res, err := up.Query(context.Background(), "SELECT current_setting('statement_timeout'), current_setting('transaction_read_only')")
	require.NoError(t, err)
	require.Equal(t, "0", string(res.Rows[0][0]), "statement_timeout leaked into the session")
	require.Equal(t, "off", string(res.Rows[0][1]), "read-only mode leaked into the session")
}

const countByCountry = "SELECT c.country, count(*) AS orders FROM shop.orders o JOIN shop.customers c ON c.id = o.customer_id GROUP BY c.country ORDER BY c.country"

func TestAnswerAndCache(t *testing.T) {
	e := newEnv(t, Config{}, llmfake.Rule{Question: "orders per country", SQL: countByCountry})
	up := connectUpstream(t, e.dsn)

	c, tag, err := ask(t, e.p, up, "/* nl: How many orders per country? */")
	require.NoError(t, err)
	require.Equal(t, "SELECT 2", tag)
	require.Equal(t, [][]string{{"Aruba", "20"}, {"Chile", "10"}}, c.rows)
	require.Len(t, c.fields, 2)
	require.Equal(t, "country", string(c.fields[0].Name))
	require.Equal(t, uint32(20), c.fields[1].DataTypeOID, "count(*) is bigint")
	require.NotZero(t, c.fields[0].TableOID, "the description names the source table")
	require.Len(t, c.notices, 1)
	require.Contains(t, c.notices[0], "shop.customers, shop.orders")
	require.Contains(t, c.notices[0], countByCountry)
	requireUsable(t, up, 'I')

	reqs := e.llm.Requests()
	require.Len(t, reqs, 1)
	prompt := reqs[0].Messages[1].Content
	require.Contains(t, prompt, "CREATE TABLE shop.customers (")
	require.Contains(t, prompt, "country text, -- country of the billing address")
	require.Contains(t, prompt, "PRIMARY KEY (id)")
	require.Contains(t, prompt, "-- Sample rows (id | name | country):")
	require.Contains(t, prompt, "--   1 | Ann | Aruba")
	require.Contains(t, prompt, "shop.orders.customer_id = shop.customers.id")
	require.Contains(t, prompt, "Question: How many orders per country?")
	require.Contains(t, reqs[0].Messages[0].Content, "exactly one read-only statement")

	// The same question, differently spaced: served from the cache.
	c, tag, err = ask(t, e.p, up, "-- nl: How many  orders per country")
	require.NoError(t, err)
	require.Equal(t, "SELECT 2", tag)
	require.Equal(t, [][]string{{"Aruba", "20"}, {"Chile", "10"}}, c.rows)
	require.Contains(t, c.notices[0], "(cached result)")
	require.Equal(t, 1, e.llm.Calls())
	require.Equal(t, int64(1), e.ret.calls.Load())
	require.Equal(t, 1.0, testutil.ToFloat64(e.p.m.questions.WithLabelValues("result_cache")))
	requireUsable(t, up, 'I')

	// A catalog change invalidates: the question is generated again.
	_, err = e.admin.Exec(context.Background(), "UPDATE atrium.catalog_state SET version = version + 1")
	require.NoError(t, err)
	_, _, err = ask(t, e.p, up, "/* nl: How many orders per country? */")
	require.NoError(t, err)
	require.Equal(t, 2, e.llm.Calls())

	// nl-sql answers with the SQL, from the SQL tier, without running it.
	c, tag, err = ask(t, e.p, up, "/* nl-sql: How many orders per country? */")
	require.NoError(t, err)
	require.Equal(t, "SELECT 1", tag)
	require.Equal(t, [][]string{{countByCountry}}, c.rows)
	require.Equal(t, "sql", string(c.fields[0].Name))
	require.Equal(t, 2, e.llm.Calls())
}

func TestSQLTierAfterResultExpiry(t *testing.T) {
	e := newEnv(t, Config{}, llmfake.Rule{Question: "orders per country", SQL: countByCountry})
	now := time.Now()
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	cache := resultcache.New(resultcache.Config{TTL: time.Minute, SQLTTL: time.Hour}, resultcache.NewLRU(1<<20, clock), resultcache.Options{})
	p, err := New(Config{Model: "fake"}, Options{Retriever: e.ret, Generator: e.p.gen, Cache: cache, Versions: NewCatalogVersion(e.admin, -1)})
	require.NoError(t, err)
	up := connectUpstream(t, e.dsn)
	_, _, err = ask(t, p, up, "/* nl: orders per country */")
	require.NoError(t, err)
	mu.Lock()
	now = now.Add(2 * time.Minute)
	mu.Unlock()
	// Rows expired, SQL not: executed again without the LLM.
	_, err = e.admin.Exec(context.Background(), "INSERT INTO shop.orders VALUES (100, 2, 1)")
	require.NoError(t, err)
	c, _, err := ask(t, p, up, "/* nl: orders per country */")
	require.NoError(t, err)
	require.Equal(t, [][]string{{"Aruba", "20"}, {"Chile", "11"}}, c.rows)
	require.NotContains(t, c.notices[0], "cached")
	require.Equal(t, 1, e.llm.Calls())
	require.Equal(t, 1.0, testutil.ToFloat64(p.m.questions.WithLabelValues("sql_cache")))
}

func TestBadGenerations(t *testing.T) {
	good := "SELECT name FROM shop.customers WHERE country = 'Aruba' ORDER BY id"
	tests := []struct {
		name  string
		rules []llmfake.Rule
		code  string
		rows  int
	}{
		{"ddl", []llmfake.Rule{{SQL: "DROP TABLE shop.orders"}}, CodeNotReadOnly, 0},
		{"two statements", []llmfake.Rule{{SQL: "SELECT 1; DELETE FROM shop.orders"}}, CodeNotReadOnly, 0},
		{"data-modifying cte", []llmfake.Rule{{SQL: "WITH d AS (DELETE FROM shop.orders RETURNING *) SELECT count(*) FROM d"}}, CodeNotReadOnly, 0},
		{"garbage", []llmfake.Rule{{Raw: "I am sorry, I cannot help with that."}}, CodeSyntax, 0},
		{"unknown column", []llmfake.Rule{{SQL: "SELECT nonexistent FROM shop.customers"}}, "42703", 0},
		{"repaired ddl", []llmfake.Rule{{Attempt: 1, SQL: "TRUNCATE shop.orders"}, {Attempt: 2, ErrorContains: "not a single read-only SELECT", SQL: good}}, "", 2},
		{"repaired column", []llmfake.Rule{{Attempt: 1, SQL: "SELECT nme FROM shop.customers WHERE country = 'Aruba'"}, {Attempt: 2, ErrorContains: `column "nme" does not exist`, SQL: good}}, "", 2},
		{"llm error", []llmfake.Rule{{Status: 500}}, CodeLLMFailed, 0},
		{"llm overloaded then fine", []llmfake.Rule{{Status: 429, RetryAfter: "0", Times: 1}, {SQL: good}}, "", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, Config{MaxRepairs: 2}, tt.rules...)
			up := connectUpstream(t, e.dsn)
			c, _, err := ask(t, e.p, up, "/* nl: customers in Aruba */")
			if tt.code != "" {
				requireCode(t, err, tt.code)
				requireUsable(t, up, 'I')
				var n int
				require.NoError(t, e.admin.QueryRow(context.Background(), "SELECT count(*) FROM shop.orders").Scan(&n))
				require.Equal(t, 30, n, "nothing was modified")
				return
			}
			require.NoError(t, err)
			require.Len(t, c.rows, tt.rows)
			requireUsable(t, up, 'I')
		})
	}
}

func TestLLMTimeoutAndUnreachable(t *testing.T) {
	e := newEnv(t, Config{}, llmfake.Rule{SQL: "SELECT 1", Delay: time.Minute})
	gen, err := NewOpenAI(OpenAIConfig{URL: e.llm.URL(), Model: "fake", Timeout: 300 * time.Millisecond}, OpenAIOptions{})
	require.NoError(t, err)
	p, err := New(Config{}, Options{Retriever: e.ret, Generator: gen})
	require.NoError(t, err)
	up := connectUpstream(t, e.dsn)
	_, _, err = ask(t, p, up, "/* nl: anything */")
	requireCode(t, err, CodeTimeout)
	requireUsable(t, up, 'I')

	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	gen, err = NewOpenAI(OpenAIConfig{URL: "http://" + addr, Model: "fake", MaxRetries: 2}, OpenAIOptions{Sleep: func(context.Context, time.Duration) error { return nil }})
	require.NoError(t, err)
	p, err = New(Config{}, Options{Retriever: e.ret, Generator: gen})
	require.NoError(t, err)
	_, _, err = ask(t, p, up, "/* nl: anything */")
	requireCode(t, err, CodeLLMFailed)
	require.Contains(t, err.Error(), "unreachable")
	requireUsable(t, up, 'I')
}

func TestNoLLM(t *testing.T) {
	e := newEnv(t, Config{})
	p, err := New(Config{}, Options{Retriever: e.ret})
	require.NoError(t, err)
	up := connectUpstream(t, e.dsn)
	_, _, err = ask(t, p, up, "/* nl: customers in Aruba */")
	requireCode(t, err, CodeNoLLM)
	var pe *proxy.Error
	require.ErrorAs(t, err, &pe)
	require.Contains(t, pe.Detail, "RETRIEVE found: shop.customers, shop.orders")
	require.Contains(t, pe.Hint, "--llm-url")
	requireUsable(t, up, 'I')

	_, _, err = ask(t, p, up, "/* nl:   */")
	requireCode(t, err, CodeSyntax)
}

func TestInsideTransaction(t *testing.T) {
	e := newEnv(t, Config{}, llmfake.Rule{SQL: "SELECT count(*) AS n FROM shop.orders"})
	up := connectUpstream(t, e.dsn)
	ctx := context.Background()
	_, err := up.Query(ctx, "BEGIN; INSERT INTO shop.orders VALUES (500, 1, 5)")
	require.NoError(t, err)
	c, _, err := ask(t, e.p, up, "/* nl: how many orders */")
	require.NoError(t, err)
	require.Equal(t, [][]string{{"31"}}, c.rows, "the question sees the client's uncommitted row")
	require.Equal(t, byte('T'), up.TxStatus())
	// The transaction is still read-write, and without our timeout.
	res, err := up.Query(ctx, "SELECT current_setting('transaction_read_only'), current_setting('statement_timeout')")
	require.NoError(t, err)
	require.Equal(t, []string{"off", "0"}, []string{string(res.Rows[0][0]), string(res.Rows[0][1])})
	_, err = up.Query(ctx, "INSERT INTO shop.orders VALUES (501, 1, 5)")
	require.NoError(t, err)

	// A failing question inside the transaction does not abort it.
	e.llm.SetRules(llmfake.Rule{SQL: "SELECT missing FROM shop.orders"})
	_, _, err = ask(t, e.p, up, "/* nl: something else */")
	requireCode(t, err, "42703")
	require.Equal(t, byte('T'), up.TxStatus())
	_, err = up.Query(ctx, "COMMIT")
	require.NoError(t, err)
	var n int
	require.NoError(t, e.admin.QueryRow(ctx, "SELECT count(*) FROM shop.orders").Scan(&n))
	require.Equal(t, 32, n)

	// A failed transaction: 25P02, and it stays failed for the client to end.
	_, err = up.Query(ctx, "BEGIN")
	require.NoError(t, err)
	_, err = up.Query(ctx, "SELECT 1/0")
	require.Error(t, err)
	_, _, err = ask(t, e.p, up, "/* nl: how many orders */")
	requireCode(t, err, CodeInFailedTx)
	require.Equal(t, byte('E'), up.TxStatus())
	_, err = up.Query(ctx, "ROLLBACK")
	require.NoError(t, err)
	requireUsable(t, up, 'I')
}

func TestRowLimitAndTimeouts(t *testing.T) {
	e := newEnv(t, Config{RowLimit: 5, StatementTimeout: 300 * time.Millisecond},
		llmfake.Rule{Question: "all orders", SQL: "SELECT id FROM shop.orders ORDER BY id"},
		llmfake.Rule{Question: "slow", SQL: "SELECT pg_sleep(30) AS slept"})
	up := connectUpstream(t, e.dsn)
	c, tag, err := ask(t, e.p, up, "/* nl: all orders */")
	require.NoError(t, err)
	require.Len(t, c.rows, 5)
	require.Equal(t, "SELECT 5", tag)
	require.Contains(t, c.notices[len(c.notices)-1], "result cut at 5 rows")
	// The cached copy is cut the same way and says so.
	c, _, err = ask(t, e.p, up, "/* nl: all orders */")
	require.NoError(t, err)
	require.Len(t, c.rows, 5)
	require.Contains(t, c.notices[len(c.notices)-1], "result cut at 5 rows")

	_, _, err = ask(t, e.p, up, "/* nl: slow */")
	requireCode(t, err, "57014")
	requireUsable(t, up, 'I')

	// A client cancel stops the generated query; the session lives on.
	p, err := New(Config{StatementTimeout: time.Minute}, Options{Retriever: e.ret, Generator: e.p.gen})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	st := statementFor(p, proxy.SessionInfo{}, "/* nl: slow */")
	_, err = st.Describe(ctx, up)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		_, err := st.Execute(ctx, up, &collector{})
		done <- err
	}()
	require.Eventually(t, func() bool {
		var n int
		_ = e.admin.QueryRow(context.Background(), "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep(30)%' AND state = 'active'").Scan(&n)
		return n == 1
	}, 20*time.Second, 20*time.Millisecond)
	cancel()
	select {
	case err := <-done:
		require.Error(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("cancel did not stop the query")
	}
	requireUsable(t, up, 'I')
}

func TestPrivileges(t *testing.T) {
	e := newEnv(t, Config{}, llmfake.Rule{SQL: "SELECT name FROM shop.customers ORDER BY id"})
	ctx := context.Background()
	role := fmt.Sprintf("atrium_nl_reader_%d", time.Now().UnixNano())
	_, err := e.admin.Exec(ctx, fmt.Sprintf(`CREATE ROLE %s LOGIN; GRANT USAGE ON SCHEMA shop TO %[1]s; GRANT SELECT ON shop.customers TO %[1]s`, role))
	require.NoError(t, err)
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), e.dsn)
		if err == nil {
			_, _ = c.Exec(context.Background(), fmt.Sprintf("DROP OWNED BY %s; DROP ROLE %[1]s", role))
			c.Close(context.Background())
		}
	})
	up := connectUpstream(t, e.dsn+"&user="+role)
	c, _, err := ask(t, e.p, up, "/* nl: customer names */")
	require.NoError(t, err)
	require.Len(t, c.rows, 3)
	_, _, err = ask(t, e.p, up, "/* nl: customer names */")
	require.NoError(t, err)
	require.Equal(t, 1.0, testutil.ToFloat64(e.p.m.questions.WithLabelValues("result_cache")))

	// Privilege revoked: the cached rows are not served; the query fails.
	_, err = e.admin.Exec(ctx, "REVOKE SELECT ON shop.customers FROM "+role)
	require.NoError(t, err)
	c, _, err = ask(t, e.p, up, "/* nl: customer names */")
	requireCode(t, err, "42501")
	require.Empty(t, c.rows)
	require.Equal(t, 1.0, testutil.ToFloat64(e.p.m.questions.WithLabelValues("result_cache")))
	requireUsable(t, up, 'I')

	// Another role never sees the first role's cache entry.
	other := fmt.Sprintf("atrium_nl_none_%d", time.Now().UnixNano())
	_, err = e.admin.Exec(ctx, fmt.Sprintf("CREATE ROLE %s LOGIN; GRANT USAGE ON SCHEMA shop TO %[1]s", other))
	require.NoError(t, err)
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), e.dsn)
		if err == nil {
			_, _ = c.Exec(context.Background(), fmt.Sprintf("DROP OWNED BY %s; DROP ROLE %[1]s", other))
			c.Close(context.Background())
		}
	})
	up2 := connectUpstream(t, e.dsn+"&user="+other)
	_, _, err = ask(t, e.p, up2, "/* nl: customer names */")
	requireCode(t, err, "42501")
}

func TestSingleflight(t *testing.T) {
	e := newEnv(t, Config{}, llmfake.Rule{SQL: "SELECT count(*) AS n FROM shop.customers", Delay: 300 * time.Millisecond})
	const n = 4
	ups := make([]*pgUpstream, n)
	for i := range ups {
		ups[i] = connectUpstream(t, e.dsn)
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	rows := make([][][]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := statementFor(e.p, proxy.SessionInfo{}, "/* nl: how many customers */")
			if _, err := st.Describe(context.Background(), ups[i]); err != nil {
				errs[i] = err
				return
			}
			c := &collector{}
			_, errs[i] = st.Execute(context.Background(), ups[i], c)
			rows[i] = c.rows
		}()
	}
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i])
		require.Equal(t, [][]string{{"3"}}, rows[i])
	}
	require.Equal(t, 1, e.llm.Calls(), "concurrent identical questions share one generation")
}

func TestRowSecurityNotCached(t *testing.T) {
	e := newEnv(t, Config{}, llmfake.Rule{SQL: "SELECT name FROM shop.customers ORDER BY id"})
	_, err := e.admin.Exec(context.Background(), "ALTER TABLE shop.customers ENABLE ROW LEVEL SECURITY")
	require.NoError(t, err)
	up := connectUpstream(t, e.dsn)
	for range 2 {
		c, _, err := ask(t, e.p, up, "/* nl: customer names */")
		require.NoError(t, err)
		require.Len(t, c.rows, 3)
	}
	require.Equal(t, 0.0, testutil.ToFloat64(e.p.m.questions.WithLabelValues("result_cache")), "rows under row-level security are not cached")
	require.Equal(t, 1.0, testutil.ToFloat64(e.p.m.questions.WithLabelValues("sql_cache")))
}

// statementFor makes the Statement for a question written as the question
// layer's lexer reads it (one "/* nl: */", "-- nl: " or "/* nl-sql: */"):
// the lexer lives above sqlgen, in package question.
func statementFor(p *Pipeline, info proxy.SessionInfo, sql string) proxy.Statement {
	q := strings.TrimSpace(sql)
	q = strings.TrimPrefix(strings.TrimPrefix(q, "/*"), "--")
	q = strings.TrimSpace(strings.TrimSuffix(q, "*/"))
	sqlOnly := strings.HasPrefix(q, "nl-sql:")
	q = strings.TrimPrefix(strings.TrimPrefix(q, "nl-sql:"), "nl:")
	return p.Statement(info, strings.Join(strings.Fields(q), " "), sqlOnly)
}
