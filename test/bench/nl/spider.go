package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/atriumdb/atrium/catalog"
	"github.com/atriumdb/atrium/catalog/benchload"
	"github.com/atriumdb/atrium/retriever/vocab"
)

// devQuestion is one Spider dev question with its gold SQL.
type devQuestion struct {
	DBID     string `json:"db_id"`
	Question string `json:"question"`
	Query    string `json:"query"`
}

// goldLLM is a TEST DOUBLE of an OpenAI-compatible chat-completions
// endpoint for the benchmark: it answers each Spider question with that
// question's gold SQL at once, so the figures measure Atrium, not a model.
// It reads the question from the prompt's "Question: " line.
type goldLLM struct {
	gold map[string]string
	srv  *httptest.Server
}

func startGoldLLM(gold map[string]string) *goldLLM {
	g := &goldLLM{gold: gold}
	g.srv = httptest.NewServer(http.HandlerFunc(g.serve))
	return g
}

func (g *goldLLM) serve(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	q := ""
	for _, m := range body.Messages {
		if m.Role == "user" {
			if _, rest, ok := strings.Cut(m.Content, "Question: "); ok {
				q, _, _ = strings.Cut(rest, "\n")
			}
			break
		}
	}
	sql, ok := g.gold[fold(q)]
	w.Header().Set("Content-Type", "application/json")
	if !ok {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":{"message":"no gold SQL for %q"}}`, q)
		return
	}
	content := "```sql\n" + sql + "\n```"
	_ = json.NewEncoder(w).Encode(map[string]any{
		"object":  "chat.completion",
		"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": content}, "finish_reason": "stop"}},
		"usage":   map[string]any{"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
	})
}

// fold folds white space as the proxy does when it reads a question.
func fold(q string) string { return strings.Join(strings.Fields(q), " ") }

// runSpider loads the Spider dev databases, catalogues them, and asks the
// dev questions through Atrium: each once uncached, then each again cached.
func runSpider(n int, adminDSN, redisURL, dir string, limit int) error {
	ctx := context.Background()
	dbDSN, drop, err := benchDB(ctx, adminDSN)
	if err != nil {
		return err
	}
	defer drop()
	// Loading and the gold-SQL check set search_path on their
	// connections: they get a pool of their own, closed before the pool
	// the catalog and Atrium use is opened.
	loadPool, err := pgxpool.New(ctx, dbDSN)
	if err != nil {
		return err
	}
	defer loadPool.Close()
	if _, err := loadPool.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS vector; CREATE EXTENSION IF NOT EXISTS pg_trgm"); err != nil {
		return err
	}
	t0 := time.Now()
	if _, err := benchload.Load(ctx, loadPool, dir, benchload.Options{}); err != nil {
		return fmt.Errorf("load Spider dev: %w", err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "dev.json"))
	if err != nil {
		return err
	}
	var dev []devQuestion
	if err := json.Unmarshal(b, &dev); err != nil {
		return fmt.Errorf("dev.json: %w", err)
	}
	// Keep the questions whose gold SQL PostgreSQL plans in its database
	// (Spider's gold SQL is written for SQLite; a few use its dialect).
	qs, err := validQuestions(ctx, loadPool, dev)
	if err != nil {
		return err
	}
	loadPool.Close()
	pool, err := pgxpool.New(ctx, dbDSN)
	if err != nil {
		return err
	}
	defer pool.Close()
	// The embedder Atrium defaults to, which the shipped scorer was
	// trained with.
	emb, err := vocab.NewDefaultEmbedder()
	if err != nil {
		return err
	}
	stats, err := catalog.Sync(ctx, pool, catalog.SyncOptions{Embedder: emb, AutoMigrate: true})
	if err != nil {
		return fmt.Errorf("catalog sync: %w", err)
	}
	fmt.Fprintf(os.Stderr, "Spider dev loaded and catalogued: %d tables in %s\n", stats.Tables, time.Since(t0).Round(time.Second))

	if limit > 0 && len(qs) > limit {
		qs = qs[:limit]
	}
	gold := map[string]string{}
	for _, q := range qs {
		gold[fold(q.Question)] = q.Query
	}
	llm := startGoldLLM(gold)
	defer llm.srv.Close()

	st, stop, err := startStack(ctx, pool, dbDSN, llm.srv.URL, redisURL, emb)
	defer stop()
	if err != nil {
		return err
	}
	sel, err := st.measureSelect1(ctx, n)
	if err != nil {
		return err
	}
	// The first question loads the catalog snapshot; warm it up apart (the
	// fake LLM has no answer for this one, so it fails after retrieval).
	_ = st.exec(ctx, "/* nl: warm up the catalog snapshot */")
	st.takeRecords()
	ask := func(q devQuestion) (time.Duration, error) {
		if err := st.exec(ctx, "SET search_path TO "+pgx.Identifier{benchload.SchemaName(q.DBID)}.Sanitize()); err != nil {
			return 0, err
		}
		t0 := time.Now()
		err := st.exec(ctx, "/* nl: "+q.Question+" */")
		return time.Since(t0), err
	}
	var uncached, cached []time.Duration
	failed := 0
	for _, q := range qs {
		d, err := ask(q)
		if err != nil {
			if failed == 0 {
				fmt.Fprintf(os.Stderr, "first failure: %q: %v\n", q.Question, err)
			}
			failed++
			continue
		}
		uncached = append(uncached, d)
	}
	recs := st.takeRecords()
	for _, q := range qs {
		d, err := ask(q)
		if err != nil {
			continue
		}
		cached = append(cached, d)
	}
	hits := 0
	for _, r := range st.takeRecords() {
		if r.CacheTier == "result" {
			hits++
		}
	}
	slices.Sort(uncached)
	slices.Sort(cached)
	fmt.Printf("NL benchmark (Spider dev): %d of %d dev questions (gold SQL valid in PostgreSQL), cache: %s, fake LLM answering each with its gold SQL instantly\n",
		len(qs), len(dev), st.cache)
	if failed > 0 {
		fmt.Printf("(%d questions failed uncached and are left out)\n", failed)
	}
	fmt.Printf("(%d of %d repeats were result-cache hits)\n", hits, len(cached))
	printTable(sel, []kindTimes{{"NL question, cached", cached}, {"NL question, uncached", uncached}})
	printStages(recs)
	return nil
}

// validQuestions returns the dev questions whose gold SQL EXPLAIN accepts
// with the search_path set to the question's database.
func validQuestions(ctx context.Context, pool *pgxpool.Pool, dev []devQuestion) ([]devQuestion, error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Release()
	var out []devQuestion
	for _, q := range dev {
		if strings.Contains(q.Question, "*/") || strings.Contains(q.Question, "\n") {
			continue
		}
		schema := pgx.Identifier{benchload.SchemaName(q.DBID)}.Sanitize()
		_, err := conn.Exec(ctx, "SET search_path TO "+schema+"; EXPLAIN "+q.Query, pgx.QueryExecModeSimpleProtocol)
		if err == nil {
			out = append(out, q)
		}
	}
	return out, nil
}
