package sqlgen

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/internal/telemetry"
	"github.com/atriumdb/atrium/proxy/resultcache"
	"github.com/atriumdb/atrium/test/llmfake"
)

// TestOnQuestion checks the per-question record (the query log's source)
// and that the question's log lines carry its request id.
func TestOnQuestion(t *testing.T) {
	e := newEnv(t, Config{}, llmfake.Rule{Question: "orders per country", Attempt: 1, SQL: "SELECT nope FROM shop.orders"},
		llmfake.Rule{Question: "orders per country", SQL: countByCountry})
	var (
		mu    sync.Mutex
		recs  []QuestionRecord
		calls []string
		logs  bytes.Buffer
	)
	log, err := telemetry.NewLogger(&syncWriter{w: &logs, mu: &mu}, "json", "debug")
	require.NoError(t, err)
	gen, err := NewOpenAI(OpenAIConfig{URL: e.llm.URL(), Model: "fake", Timeout: 5 * time.Second}, OpenAIOptions{})
	require.NoError(t, err)
	p, err := New(Config{Model: "fake"}, Options{
		Retriever: e.ret, Generator: gen, Versions: NewCatalogVersion(e.admin, -1), Logger: log,
		Cache: resultcache.New(resultcache.Config{}, resultcache.NewLRU(8<<20, nil), resultcache.Options{}),
		OnQuestion: func(ctx context.Context, r QuestionRecord) {
			require.Equal(t, r.RequestID, telemetry.RequestID(ctx))
			mu.Lock()
			recs = append(recs, r)
			mu.Unlock()
		},
	})
	require.NoError(t, err)
	up := connectUpstream(t, e.dsn)

	_, _, err = ask(t, p, up, "/* nl: orders per country */")
	require.NoError(t, err)
	_, _, err = ask(t, p, up, "/* nl: orders per country */")
	require.NoError(t, err)
	_, _, err = ask(t, p, up, "/* nl: */")
	requireCode(t, err, CodeSyntax)

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, recs, 3)
	gen1, hit, bad := recs[0], recs[1], recs[2]
	for _, c := range gen1.LLMCalls {
		require.NoError(t, c.Err)
		calls = append(calls, c.Purpose)
	}
	require.Equal(t, []string{PurposeGenerate, PurposeRepair}, calls)
	require.NotNil(t, gen1.Retrieval, "the generation's retrieval is in its record")
	require.Equal(t, 2, gen1.Retrieval.Chosen)
	require.Nil(t, hit.Retrieval, "a cache hit retrieves nothing")
	require.Empty(t, hit.LLMCalls)
	require.Len(t, gen1.RequestID, 16)
	require.NotEqual(t, gen1.RequestID, hit.RequestID)
	require.Equal(t, "nl", gen1.Kind)
	require.Equal(t, "orders per country", gen1.Question)
	require.Equal(t, "postgres", gen1.Role)
	require.Equal(t, []string{"shop.customers", "shop.orders"}, gen1.Tables)
	require.Equal(t, countByCountry, gen1.SQL)
	require.Equal(t, int64(2), gen1.Rows)
	require.Equal(t, 1, gen1.Repairs)
	require.Equal(t, "", gen1.CacheTier)
	require.Equal(t, int64(1), gen1.CatalogVersion)
	require.NoError(t, gen1.Err)
	for _, s := range []string{"retrieve", "sample", "llm", "validate", "execute"} {
		require.Contains(t, gen1.Stages, s)
	}
	require.Equal(t, TierResult, hit.CacheTier)
	require.Equal(t, int64(2), hit.Rows)
	require.Error(t, bad.Err)
	require.Equal(t, CodeSyntax, bad.SQLState)

	// Each question has one log line, derived from the same trace as its
	// record and naming its request id.
	for _, r := range recs {
		var lines []string
		for _, l := range strings.Split(logs.String(), "\n") {
			if strings.Contains(l, `"msg":"question finished"`) && strings.Contains(l, `"request_id":"`+r.RequestID+`"`) {
				lines = append(lines, l)
			}
		}
		require.Len(t, lines, 1, logs.String())
		require.Contains(t, lines[0], `"kind":"nl"`)
		if r.Err != nil {
			require.Contains(t, lines[0], `"sqlstate":"`+r.SQLState+`"`)
		}
	}
}

type syncWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
