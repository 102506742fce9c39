package retriever

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pgvector/pgvector-go"
	"github.com/stretchr/testify/require"
)

// removalLLM is a TEST DOUBLE: a fake OpenAI-compatible chat-completions
// server for MURRE's removal prompt. It reads the question and the tables
// of the prompt's last block and answers with answer(question, tables).
type removalLLM struct {
	srv    *httptest.Server
	answer func(question string, tables []string) string

	mu struct {
		sync.Mutex
		prompts []removalRequest
		auth    []string
	}
}

type removalRequest struct {
	Question string
	Tables   []string
}

func startRemovalLLM(t *testing.T, answer func(question string, tables []string) string) *removalLLM {
	f := &removalLLM{answer: answer}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *removalLLM) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	var body struct {
		Model    string `json:"model"`
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || len(body.Messages) == 0 {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	content := body.Messages[len(body.Messages)-1].Content
	// The last block is "Question: q\nDatabase: t1\nt2\nCompleting Tables:".
	i := strings.LastIndex(content, "Question: ")
	block := content[i+len("Question: "):]
	q, rest, _ := strings.Cut(block, "\nDatabase: ")
	tables := strings.Split(strings.TrimSuffix(rest, "\nCompleting Tables:"), "\n")
	f.mu.Lock()
	f.mu.prompts = append(f.mu.prompts, removalRequest{Question: q, Tables: tables})
	f.mu.auth = append(f.mu.auth, r.Header.Get("Authorization"))
	f.mu.Unlock()
	ans := f.answer(q, tables)
	if strings.HasPrefix(ans, "HTTP ") {
		http.Error(w, `{"error":{"message":"scripted failure"}}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"object":  "chat.completion",
		"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": ans}, "finish_reason": "stop"}},
	})
}

func (f *removalLLM) prompts() []removalRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]removalRequest(nil), f.mu.prompts...)
}

func (f *removalLLM) url() string { return f.srv.URL + "/v1" }

func TestParseRemoval(t *testing.T) {
	for _, tc := range []struct {
		in   string
		rest string
		done bool
	}{
		{"None", "", true},
		{" none. ", "", true},
		{"`None`", "", true},
		{"Completing Tables: None", "", true},
		{"", "", true},
		{"car_1.car makers(maker)", "car_1.car makers(maker)", false},
		{"Completing Tables: shop.orders(order id)\n\nQuestion: next", "shop.orders(order id)", false},
	} {
		rest, done, err := parseRemoval(tc.in)
		require.NoError(t, err)
		require.Equal(t, tc.rest, rest, tc.in)
		require.Equal(t, tc.done, done, tc.in)
	}
}

func TestOpenAIRewriter(t *testing.T) {
	llm := startRemovalLLM(t, func(q string, tables []string) string {
		switch {
		case strings.Contains(q, "fail"):
			return "HTTP 500"
		case len(tables) == 2:
			return "None"
		}
		return "Completing Tables: shop.orders(order_id, customer_id)"
	})
	rw := &OpenAIRewriter{URL: llm.url(), Model: "m", APIKey: "secret"}
	ctx := context.Background()
	rest, done, err := rw.Rewrite(ctx, "Which customers ordered?", []string{"shop.customers(customer_id, city)"})
	require.NoError(t, err)
	require.False(t, done)
	require.Equal(t, "shop.orders(order_id, customer_id)", rest)
	_, done, err = rw.Rewrite(ctx, "Which customers ordered?", []string{"shop.customers(customer_id)", "shop.orders(order_id)"})
	require.NoError(t, err)
	require.True(t, done)
	_, _, err = rw.Rewrite(ctx, "fail please", []string{"x.y(z)"})
	require.ErrorContains(t, err, "HTTP 500")

	ps := llm.prompts()
	require.Len(t, ps, 3)
	require.Equal(t, removalRequest{Question: "Which customers ordered?", Tables: []string{"shop.customers(customer_id, city)"}}, ps[0])
	require.Equal(t, "Bearer secret", llm.mu.auth[0])
}

// TestMurreSearch checks the beam search on scripted retrieval: beam width,
// path scores as products of (cos+1)/2, removal rewriting the next hop's
// question, None ending a path, and no LLM call after the last hop.
func TestMurreSearch(t *testing.T) {
	// Hop 1 from the question; hop 2 from the rewritten questions.
	near := map[string][]hit{
		"q":       {{1, 0.8}, {2, 0.6}, {3, 0.2}, {4, -0.2}},
		"need 5":  {{5, 0.9}, {1, 0.5}, {6, 0.0}},
		"need 6":  {{6, 0.4}, {2, 0.3}, {5, 0.1}},
		"need 56": {{5, 0.6}, {6, 0.6}},
	}
	var rewrites [][]int64
	m := murre{
		cfg: MultihopConfig{Beam: 2, Hops: 3},
		nearest: func(_ context.Context, text string, k int) ([]hit, error) {
			hs, ok := near[text]
			if !ok {
				return nil, fmt.Errorf("unexpected question %q", text)
			}
			return hs[:min(k, len(hs))], nil
		},
		rewrite: func(_ context.Context, ids []int64) (string, bool, error) {
			rewrites = append(rewrites, append([]int64(nil), ids...))
			switch fmt.Sprint(ids) {
			case "[1]":
				return "need 5", false, nil
			case "[2]":
				return "need 56", false, nil
			case "[1 5]":
				return "None", true, nil
			}
			return "need 6", false, nil
		},
	}
	beams, err := m.search(context.Background(), "q")
	require.NoError(t, err)

	norm := func(c float64) float64 { return (c + 1) / 2 }
	// Hop 1 keeps [1] (0.9) and [2] (0.8). Hop 2: [1 5] 0.9·0.95, [2 5]
	// and [2 6] 0.8·0.8, [1 6] 0.9·0.5: keeps [1 5] and [2 5]
	// (stable order on ties). [1 5] is done; [2 5] is rewritten to
	// "need 6". Hop 3 extends [2 5] by 6 only (5 is held): [2 5 6]
	// 0.64·0.7 = 0.448 < [1 5] 0.855, so the beam is [1 5], [2 5 6].
	require.Len(t, beams, 2)
	require.Equal(t, []int64{1, 5}, beams[0].tables)
	require.True(t, beams[0].done)
	require.InDelta(t, norm(0.8)*norm(0.9), beams[0].score, 1e-12)
	require.Equal(t, []int64{2, 5, 6}, beams[1].tables)
	require.InDelta(t, norm(0.6)*norm(0.6)*norm(0.4), beams[1].score, 1e-12)
	// Rewrites after hops 1 and 2 only, never for a finished path.
	require.Equal(t, [][]int64{{1}, {2}, {1, 5}, {2, 5}}, rewrites)

	scores := tableScores(beams)
	require.InDelta(t, norm(0.8)*norm(0.9), scores[5], 1e-12, "table score is the best path holding it")
	require.InDelta(t, norm(0.6)*norm(0.6)*norm(0.4), scores[6], 1e-12)
	require.Same(t, beams[0], bestPath(beams))

	// Every path finished after hop 1: the search stops there.
	rewrites = nil
	m.rewrite = func(_ context.Context, ids []int64) (string, bool, error) {
		rewrites = append(rewrites, ids)
		return "None", true, nil
	}
	beams, err = m.search(context.Background(), "q")
	require.NoError(t, err)
	require.Len(t, beams, 2)
	require.Len(t, rewrites, 2)
	for _, b := range beams {
		require.Len(t, b.tables, 1)
		require.True(t, b.done)
	}
}

// rejectAll is a scorer that rates every table below the threshold, so only
// multi-hop retrieval can choose tables.
type rejectAll struct{}

func (rejectAll) Score(_ context.Context, _ *Query, w []*Candidate) ([]float64, float64, error) {
	out := make([]float64, len(w))
	for i := range out {
		out[i] = -10
	}
	return out, 0, nil
}

func TestMultihopEndToEnd(t *testing.T) {
	pool, emb := setupCatalog(t)
	const question = "full name and city of every customer"
	llm := startRemovalLLM(t, func(q string, tables []string) string {
		for _, tb := range tables {
			if strings.HasPrefix(tb, "shop.customers(") {
				return "None"
			}
		}
		return "shop.customers(customer_id, full_name, city)"
	})
	r, err := New(pool, Config{Expansion: ExpansionConfig{Disabled: true}, Multihop: MultihopConfig{Enabled: true}},
		Options{Embedder: emb, Scorer: rejectAll{}, Rewriter: &OpenAIRewriter{URL: llm.url(), Model: "test"}})
	require.NoError(t, err)
	ctx := context.Background()
	res, err := r.Retrieve(ctx, question)
	require.NoError(t, err)

	// The LLM saw the original question each time and catalog tables
	// rendered schema.table(columns).
	ps := llm.prompts()
	require.NotEmpty(t, ps)
	for _, p := range ps {
		require.Equal(t, question, p.Question)
		for _, tb := range p.Tables {
			require.Regexp(t, `^(shop|zoo)\.\w+\(.*\)$`, tb)
		}
	}
	// The best finished path holds shop.customers; it comes back chosen,
	// for reason multihop, scored with its path score.
	var got *ResultTable
	for i, rt := range res.Tables {
		if rt.Chosen && rt.Table.QualifiedName() == "shop.customers" {
			got = &res.Tables[i]
		}
	}
	require.NotNil(t, got, "tables: %v", chosenNames(res))
	require.Contains(t, got.Reasons, ReasonMultihop)
	vs, err := emb.Embed(ctx, []string{question})
	require.NoError(t, err)
	var cos float64
	require.NoError(t, pool.QueryRow(ctx, `SELECT 1 - (embedding <=> $1) FROM atrium.tables WHERE schema_name = 'shop' AND table_name = 'customers'`,
		pgvector.NewVector(vs[0])).Scan(&cos))
	// Either the one-hop path [customers] (score (cos+1)/2) or a longer one
	// through it; the table score is the best path holding it, which is at
	// most the one-hop score and positive.
	require.Greater(t, got.Score, 0.0)
	require.LessOrEqual(t, got.Score, (cos+1)/2+1e-6)
	if len(ps) > 0 && ps[0].Tables[0] == "shop.customers(customer_id, full_name, city)" {
		require.InDelta(t, (cos+1)/2, got.Score, 1e-6)
	}
	require.Greater(t, res.Timings.Multihop, time.Duration(0))
	require.False(t, math.IsNaN(got.Score))
}
