package sqlgen

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/proxy"
	"github.com/atriumdb/atrium/proxy/resultcache"
	"github.com/atriumdb/atrium/test/llmfake"
	"github.com/atriumdb/atrium/test/testdb"
)

// BenchmarkSQLTierQuestion measures one question answered from the SQL
// cache (rows not cached): Describe (identity, validation on the session)
// and Execute (identity again, the query, cacheability) on a real
// PostgreSQL session, the path whose round trips the identity read adds to.
func BenchmarkSQLTierQuestion(b *testing.B) {
	dsn := testdb.New(b)
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, dsn)
	require.NoError(b, err)
	defer admin.Close(ctx)
	_, err = admin.Exec(ctx, fixture)
	require.NoError(b, err)
	llm := llmfake.Start(llmfake.Rule{Question: "orders per country", SQL: countByCountry})
	defer llm.Close()
	gen, err := NewOpenAI(OpenAIConfig{URL: llm.URL(), Model: "fake", Timeout: 5 * time.Second}, OpenAIOptions{})
	require.NoError(b, err)
	cache := resultcache.New(resultcache.Config{TTL: -1}, resultcache.NewLRU(8<<20, nil), resultcache.Options{})
	p, err := New(Config{Model: "fake", SampleRows: -1}, Options{Retriever: &staticRetriever{}, Generator: gen, Cache: cache, Versions: NewCatalogVersion(admin, time.Hour)})
	require.NoError(b, err)
	up := &benchCounter{pgUpstream: connectUpstream(b, dsn)}
	info := proxy.SessionInfo{ID: 11, User: "postgres"}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		st := p.Statement(info, "orders per country", false)
		if _, err := st.Describe(ctx, up); err != nil {
			b.Fatal(err)
		}
		if _, err := st.Execute(ctx, up, &collector{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(up.n)/float64(b.N), "roundtrips/op")
}

// benchCounter counts round trips on the session (each Query, Stream and
// Describe is one).
type benchCounter struct {
	*pgUpstream
	n int
}

func (c *benchCounter) Query(ctx context.Context, sql string) (*proxy.Result, error) {
	c.n++
	return c.pgUpstream.Query(ctx, sql)
}

func (c *benchCounter) Stream(ctx context.Context, sql string, limit int, w proxy.RowWriter, params ...[]byte) (string, bool, error) {
	c.n++
	return c.pgUpstream.Stream(ctx, sql, limit, w, params...)
}

func (c *benchCounter) Describe(ctx context.Context, sql string) ([]pgproto3.FieldDescription, error) {
	c.n++
	return c.pgUpstream.Describe(ctx, sql)
}
