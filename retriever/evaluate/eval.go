// Package evaluate measures table retrieval on a Spider-format benchmark
// (`atrium eval`): it loads the benchmark into a dedicated database, syncs
// its catalog, runs every question through the serving retriever and scores
// each method. The serving package does not import it.
package evaluate

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strings"

	"github.com/atriumdb/atrium/catalog"
	"github.com/atriumdb/atrium/catalog/benchload"
	"github.com/atriumdb/atrium/migrations"
	"github.com/atriumdb/atrium/retriever"
)

// Method names of an evaluation report.
const (
	MethodATR       = "atr"
	MethodDefault   = "atr+expansion"
	methodTopPrefix = "hybrid@"
)

// EvalReport is the JSON `atrium eval` writes.
type EvalReport struct {
	Benchmark string                 `json:"benchmark"`
	Questions int                    `json:"questions"`
	Default   string                 `json:"default"`
	Methods   map[string]MethodStats `json:"methods"`
}

// MethodOrder lists the report's methods in display order.
func MethodOrder() []string {
	return []string{methodTopPrefix + "3", methodTopPrefix + "5", methodTopPrefix + "10", methodTopPrefix + "50", MethodATR, MethodDefault}
}

// EvalJob is a whole `atrium eval` run.
type EvalJob struct {
	BenchDir string
	// QuestionsFile in BenchDir; empty: dev.json, else questions.json.
	QuestionsFile string
	// ServerDSN names the server; a dedicated database atrium_eval_<name> is
	// created there.
	ServerDSN    string
	Limit        int
	WithEvidence bool
	KeepDB       bool
	Config       retriever.Config
	// Scorer reranks in ATR; nil means the built-in lite model.
	Scorer retriever.Scorer
	// Progress, when set, receives a line now and then.
	Progress io.Writer
	Logger   *slog.Logger
}

var nonIdent = regexp.MustCompile(`[^a-z0-9_]+`)

// RunEval loads the benchmark into a dedicated database, syncs its catalog
// with the builtin embedder, runs every question and scores each method.
func RunEval(ctx context.Context, job EvalJob) (*EvalReport, error) {
	log := job.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	bench, err := benchload.LoadBench(job.BenchDir, job.QuestionsFile)
	if err != nil {
		return nil, err
	}
	name := "atrium_eval_" + nonIdent.ReplaceAllString(strings.ToLower(bench.Name), "_")
	dsn, drop, err := benchload.DedicatedDB(ctx, job.ServerDSN, name)
	if err != nil {
		return nil, err
	}
	if !job.KeepDB {
		defer drop()
	}
	cfg := job.Config.WithDefaults()
	pool, err := retriever.OpenPool(ctx, dsn, cfg.PerList, nil)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	if _, err := migrations.Up(ctx, pool, migrations.Options{Logger: log}); err != nil {
		return nil, fmt.Errorf("eval: migrate: %w", err)
	}
	progress(job.Progress, "loading %s into %s\n", job.BenchDir, name)
	if _, err := benchload.Load(ctx, pool, job.BenchDir, benchload.Options{Logger: log}); err != nil {
		return nil, fmt.Errorf("eval: load benchmark: %w", err)
	}
	progress(job.Progress, "syncing the catalog\n")
	emb := catalog.NewBuiltinEmbedder(0)
	if _, err := catalog.Sync(ctx, pool, catalog.SyncOptions{Embedder: emb, Logger: log}); err != nil {
		return nil, fmt.Errorf("eval: sync catalog: %w", err)
	}
	r, err := retriever.New(pool, cfg, retriever.Options{Logger: log, Embedder: emb, Scorer: job.Scorer})
	if err != nil {
		return nil, err
	}
	return Evaluate(ctx, r, bench, job.Limit, job.WithEvidence, job.Progress)
}

// Evaluate runs the questions of bench through r and scores each method.
func Evaluate(ctx context.Context, r *retriever.Retriever, bench *benchload.Bench, limit int, withEvidence bool, prog io.Writer) (*EvalReport, error) {
	accs := map[string]*accumulator{}
	for _, m := range MethodOrder() {
		accs[m] = &accumulator{}
	}
	qs := bench.Questions
	if limit > 0 && limit < len(qs) {
		qs = qs[:limit]
	}
	// One warm-up retrieval loads the snapshot, so the first question's
	// latency is not the cache fill.
	if len(qs) > 0 {
		if _, err := r.Retrieve(ctx, qs[0].Question); err != nil {
			return nil, fmt.Errorf("eval: %w", err)
		}
	}
	n := 0
	for i := range qs {
		q := &qs[i]
		gold, err := bench.GoldTables(q)
		if err != nil {
			return nil, fmt.Errorf("eval: question %d: %w", i, err)
		}
		text := q.Question
		if withEvidence && strings.TrimSpace(q.Evidence) != "" {
			text += " " + q.Evidence
		}
		res, err := r.Retrieve(ctx, text)
		if err != nil {
			return nil, fmt.Errorf("eval: question %d (%q): %w", i, text, err)
		}
		n++
		hybridLat := res.Timings.Embed + res.Timings.Hybrid
		for _, k := range []int{3, 5, 10, 50} {
			var got []string
			for j, c := range res.Candidates {
				if j == k {
					break
				}
				got = append(got, strings.ToLower(c.Table.QualifiedName()))
			}
			accs[fmt.Sprintf("%s%d", methodTopPrefix, k)].add(ScoreSet(got, gold), hybridLat)
		}
		var atr []string
		for _, t := range res.ATR {
			atr = append(atr, strings.ToLower(t.QualifiedName()))
		}
		accs[MethodATR].add(ScoreSet(atr, gold), hybridLat+res.Timings.ATR)
		var final []string
		for _, t := range res.Chosen() {
			final = append(final, strings.ToLower(t.Table.QualifiedName()))
		}
		accs[MethodDefault].add(ScoreSet(final, gold), res.Timings.Total)
		if prog != nil && n%200 == 0 {
			progress(prog, "%d/%d questions\n", n, len(qs))
		}
	}
	rep := &EvalReport{Benchmark: bench.Name, Questions: n, Default: MethodDefault, Methods: map[string]MethodStats{}}
	for name, a := range accs {
		rep.Methods[name] = a.stats()
	}
	return rep, nil
}

func progress(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format, args...)
	}
}

// WriteTable prints a report as an aligned table.
func (rep *EvalReport) WriteTable(w io.Writer) {
	fmt.Fprintf(w, "benchmark %s, %d questions (default pipeline: %s)\n", rep.Benchmark, rep.Questions, rep.Default)
	fmt.Fprintf(w, "%-15s %9s %7s %8s %6s %10s %7s %7s\n", "method", "precision", "recall", "complete", "f1", "avg_tables", "p50_ms", "p95_ms")
	for _, m := range MethodOrder() {
		s, ok := rep.Methods[m]
		if !ok {
			continue
		}
		fmt.Fprintf(w, "%-15s %9.3f %7.3f %8.3f %6.3f %10.2f %7.2f %7.2f\n", m, s.Precision, s.Recall, s.CompleteRecall, s.F1, s.AvgTables, s.P50Ms, s.P95Ms)
	}
}
