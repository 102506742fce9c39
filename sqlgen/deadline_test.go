package sqlgen

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/proxy"
	"github.com/atriumdb/atrium/proxy/resultcache"
	"github.com/atriumdb/atrium/test/llmfake"
)

// deadlines records, per call, how far the context's deadline was; a
// negative value means the call had none.
type deadlines struct {
	mu   sync.Mutex
	left map[string][]time.Duration
}

func (d *deadlines) note(ctx context.Context, call string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.left == nil {
		d.left = map[string][]time.Duration{}
	}
	left := time.Duration(-1)
	if dl, ok := ctx.Deadline(); ok {
		left = time.Until(dl)
	}
	d.left[call] = append(d.left[call], left)
}

func (d *deadlines) reset() {
	d.mu.Lock()
	d.left = nil
	d.mu.Unlock()
}

// requireWithin checks that every call seen had a deadline at most max
// away (cleanupTimeout for closing a scope).
func (d *deadlines) requireWithin(t *testing.T, max time.Duration) {
	t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	require.NotEmpty(t, d.left)
	for call, ls := range d.left {
		max := max
		if call == "cleanup" {
			max = cleanupTimeout
		}
		for _, l := range ls {
			require.True(t, l >= 0, "%s ran without a deadline", call)
			require.LessOrEqual(t, l, max, "%s ran with a deadline %v away, want at most %v", call, l, max)
		}
	}
}

type deadlineUpstream struct {
	*pgUpstream
	d *deadlines
}

func (u deadlineUpstream) Query(ctx context.Context, sql string) (*proxy.Result, error) {
	if strings.HasPrefix(sql, "ROLLBACK") {
		// Closing a scope outlives the question's own context on purpose
		// (the session must be put back), under cleanupTimeout.
		u.d.note(ctx, "cleanup")
	} else {
		u.d.note(ctx, "upstream")
	}
	return u.pgUpstream.Query(ctx, sql)
}

func (u deadlineUpstream) Stream(ctx context.Context, sql string, limit int, w proxy.RowWriter, params ...[]byte) (string, bool, error) {
	u.d.note(ctx, "upstream")
	return u.pgUpstream.Stream(ctx, sql, limit, w, params...)
}

func (u deadlineUpstream) Describe(ctx context.Context, sql string) ([]pgproto3.FieldDescription, error) {
	u.d.note(ctx, "upstream")
	return u.pgUpstream.Describe(ctx, sql)
}

type deadlineCache struct {
	ResultCache
	d *deadlines
}

func (c deadlineCache) GetResult(ctx context.Context, key string) (*resultcache.Result, bool) {
	c.d.note(ctx, "cache")
	return c.ResultCache.GetResult(ctx, key)
}

func (c deadlineCache) PutResult(ctx context.Context, key string, r *resultcache.Result) {
	c.d.note(ctx, "cache")
	c.ResultCache.PutResult(ctx, key, r)
}

func (c deadlineCache) GetSQL(ctx context.Context, key string) (*resultcache.SQLEntry, bool) {
	c.d.note(ctx, "cache")
	return c.ResultCache.GetSQL(ctx, key)
}

func (c deadlineCache) PutSQL(ctx context.Context, key string, e *resultcache.SQLEntry) {
	c.d.note(ctx, "cache")
	c.ResultCache.PutSQL(ctx, key, e)
}

type deadlineRetriever struct {
	Retriever
	d *deadlines
}

func (r deadlineRetriever) Retrieve(ctx context.Context, up proxy.Upstream, a Ask) (*Retrieval, error) {
	r.d.note(ctx, "retrieve")
	return r.Retriever.Retrieve(ctx, up, a)
}

// TestPhaseDeadlines checks that each phase of a question runs under a
// deadline derived from the session's context, whatever that context
// carries: generation (retrieval, prompt, LLM, validation) under
// GenerateTimeout, execution under the statement timeout plus a margin,
// and every cache call under a short timeout of its own.
func TestPhaseDeadlines(t *testing.T) {
	e := newEnv(t, Config{})
	gen, err := NewOpenAI(OpenAIConfig{URL: e.llm.URL(), Model: "fake", Timeout: 5 * time.Second, MaxRetries: 1}, OpenAIOptions{})
	require.NoError(t, err)
	e.llm.SetRules(llmfake.Rule{Question: "orders per country", SQL: countByCountry})
	gd, xd, cd := &deadlines{}, &deadlines{}, &deadlines{}
	cfg := Config{Model: "fake", GenerateTimeout: 40 * time.Second, StatementTimeout: 3 * time.Second}
	p, err := New(cfg, Options{Retriever: deadlineRetriever{e.ret, gd}, Generator: gen,
		Cache: deadlineCache{e.cache, cd}, Versions: NewCatalogVersion(e.admin, -1)})
	require.NoError(t, err)
	pg := connectUpstream(t, e.dsn)
	// The session's context has no deadline, as a proxy session's has none.
	ctx := context.Background()
	for _, q := range []string{"orders per country", "orders per country"} { // generated, then cached
		st := p.Statement(proxy.SessionInfo{ID: 3, User: "postgres"}, q, false)
		gd.reset()
		_, err := st.Describe(ctx, deadlineUpstream{pg, gd})
		require.NoError(t, err)
		gd.requireWithin(t, cfg.GenerateTimeout)
		xd.reset()
		_, err = st.Execute(ctx, deadlineUpstream{pg, xd}, &collector{})
		require.NoError(t, err)
		xd.requireWithin(t, cfg.StatementTimeout+execMargin)
	}
	cd.requireWithin(t, cacheTimeout)
	requireUsable(t, pg, 'I')
}
