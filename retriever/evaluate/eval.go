// Package evaluate measures table retrieval on a Spider-format benchmark
// (`atrium eval`): it loads the benchmark into a dedicated database, syncs
// its catalog, runs every question through the serving retriever and scores
// each method. The serving package does not import it.
package evaluate

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/atriumdb/atrium/catalog"
	"github.com/atriumdb/atrium/catalog/benchload"
	"github.com/atriumdb/atrium/migrations"
	"github.com/atriumdb/atrium/retriever"
	"github.com/atriumdb/atrium/retriever/vocab"
)

// Method names of an evaluation report.
const (
	MethodATR       = "atr"
	MethodDefault   = "atr+expansion"
	methodTopPrefix = "hybrid@"
)

// EvalReport is the JSON `atrium eval` writes. Questions counts every
// question; Unanswerable those without gold SQL (P/R/CR/F1 are over the
// others).
type EvalReport struct {
	Benchmark    string                 `json:"benchmark"`
	Questions    int                    `json:"questions"`
	Unanswerable int                    `json:"unanswerable"`
	Default      string                 `json:"default"`
	Methods      map[string]MethodStats `json:"methods"`
	// AbstainFloor and AbstainCoverage are the retriever's settings (null:
	// disabled).
	AbstainFloor    *float64 `json:"abstain_floor"`
	AbstainCoverage *float64 `json:"abstain_coverage"`
	// AbstainEvidence is the optional absolute-evidence rule (omitted: off).
	AbstainEvidence *retriever.AbstainEvidence `json:"abstain_evidence,omitempty"`
	// AbstainCurve is the default pipeline's trade-off over abstention
	// floors (EvalOptions.Curve).
	AbstainCurve []CurvePoint `json:"abstain_curve,omitempty"`
	// ExampleSplit is the --examples split breakdown: Questions then
	// counts the evaluated half, Methods[MethodDefault] is with the other
	// half as examples and Methods[MethodNoExamples] without.
	ExampleSplit *ExampleSplit `json:"example_split,omitempty"`
}

// MethodOrder lists the report's methods in display order.
func MethodOrder() []string {
	return []string{methodTopPrefix + "3", methodTopPrefix + "5", methodTopPrefix + "10", methodTopPrefix + "50", MethodATR, MethodDefault, MethodNoExamples}
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
	// Unanswerable names a questions file (a path) appended to the
	// benchmark's: questions without gold SQL, optionally asked against the
	// pool without some databases (exclude_dbs) or within some (pool_dbs).
	Unanswerable string
	// PerQuestion, when set, receives one JSON line per question (see
	// QuestionRecord).
	PerQuestion io.Writer
	// Curve asks for the abstention trade-off curve in the report.
	Curve bool
	// Examples "split" turns the questions at even positions within each
	// database into examples and evaluates the others with and without
	// them; "" evaluates every question as usual.
	Examples string
	// ExampleGrid, with Examples "split", also scores the default pipeline
	// with each of these example parameters.
	ExampleGrid []retriever.ExampleParams
	Config      retriever.Config
	// Scorer reranks in ATR; nil means the built-in lite model.
	Scorer retriever.Scorer
	// Embedder embeds the catalog and the questions; nil means
	// vocab.DefaultEmbedderKind's.
	Embedder catalog.Embedder
	// Progress, when set, receives a line now and then.
	Progress io.Writer
	Logger   *slog.Logger
}

var nonIdent = regexp.MustCompile(`[^a-z0-9_]+`)

// RunEval loads the benchmark into a dedicated database, syncs its catalog
// with the job's embedder, runs every question and scores each method.
func RunEval(ctx context.Context, job EvalJob) (*EvalReport, error) {
	log := job.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	bench, err := benchload.LoadBench(job.BenchDir, job.QuestionsFile)
	if err != nil {
		return nil, err
	}
	if job.Limit > 0 && job.Limit < len(bench.Questions) {
		bench.Questions = bench.Questions[:job.Limit]
	}
	if job.Unanswerable != "" {
		extra, err := benchload.ReadQuestions(job.Unanswerable)
		if err != nil {
			return nil, err
		}
		bench.Questions = append(bench.Questions, extra...)
	}
	var examples []benchload.Question
	switch job.Examples {
	case "":
	case "split":
		// A question whose gold tables cannot be read (a few of Spider
		// train's SQLite-only queries) can be neither an example nor
		// scored: it is left out before the split.
		kept := bench.Questions[:0]
		for _, q := range bench.Questions {
			if _, err := bench.GoldTables(&q); err == nil || q.Unanswerable() {
				kept = append(kept, q)
			}
		}
		if n := len(bench.Questions) - len(kept); n > 0 {
			progress(job.Progress, "left out %d questions whose gold tables cannot be read\n", n)
		}
		examples, bench.Questions = SplitExamples(kept)
	default:
		return nil, fmt.Errorf("eval: unknown --examples mode %q (want split)", job.Examples)
	}
	// A kept database has a stable name to serve from (README); a
	// throwaway one carries the process id, so two evaluations on one
	// server do not drop each other's database.
	name := "atrium_eval_" + nonIdent.ReplaceAllString(strings.ToLower(bench.Name), "_")
	if !job.KeepDB {
		name = fmt.Sprintf("%s_%d", name, os.Getpid())
	}
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
	// The pool is every database the questions name (their own, the ones
	// they are asked without, their explicit pools); a file of off-topic
	// questions alone names none, and then Load takes dev.json's.
	if _, err := benchload.Load(ctx, pool, job.BenchDir, benchload.Options{DBIDs: bench.PoolDBIDs(), Logger: log}); err != nil {
		return nil, fmt.Errorf("eval: load benchmark: %w", err)
	}
	progress(job.Progress, "syncing the catalog\n")
	emb := job.Embedder
	if emb == nil {
		if emb, err = vocab.NewDefaultEmbedder(); err != nil {
			return nil, fmt.Errorf("eval: %w", err)
		}
	}
	if _, err := catalog.Sync(ctx, pool, catalog.SyncOptions{Embedder: emb, Logger: log}); err != nil {
		return nil, fmt.Errorf("eval: sync catalog: %w", err)
	}
	if job.Examples != "" {
		progress(job.Progress, "adding %d questions as examples\n", len(examples))
		if err := insertExamples(ctx, pool, bench, examples); err != nil {
			return nil, err
		}
	}
	r, err := retriever.New(pool, cfg, retriever.Options{Logger: log, Embedder: emb, Scorer: job.Scorer})
	if err != nil {
		return nil, err
	}
	return Evaluate(ctx, r, bench, EvalOptions{WithEvidence: job.WithEvidence, Progress: job.Progress, PerQuestion: job.PerQuestion, Curve: job.Curve,
		Examples: job.Examples != "", ExampleCount: len(examples), ExampleGrid: job.ExampleGrid})
}

// EvalOptions steer Evaluate.
type EvalOptions struct {
	// Limit evaluates only the first Limit questions (0: all).
	Limit        int
	WithEvidence bool
	// Progress, when set, receives a line now and then.
	Progress io.Writer
	// PerQuestion, when set, receives one JSON line per question.
	PerQuestion io.Writer
	// Curve adds the abstention trade-off curve to the report.
	Curve bool
	// Examples also runs every question without the learning index
	// (MethodNoExamples) and splits the report by nearest-example
	// similarity; ExampleCount is how many examples there are.
	Examples     bool
	ExampleCount int
	// ExampleGrid, with Examples, scores the default pipeline with each
	// of these example parameters.
	ExampleGrid []retriever.ExampleParams
}

// Evaluate runs the questions of bench through r and scores each method.
// A question without gold SQL counts as unanswerable: it only feeds the
// abstention figures.
func Evaluate(ctx context.Context, r *retriever.Retriever, bench *benchload.Bench, opts EvalOptions) (*EvalReport, error) {
	accs := map[string]*accumulator{}
	for _, m := range MethodOrder() {
		if m != MethodNoExamples {
			accs[m] = &accumulator{}
		}
	}
	qs := bench.Questions
	if opts.Limit > 0 && opts.Limit < len(qs) {
		qs = qs[:opts.Limit]
	}
	// Per-question pools name databases; the retriever filters by table id.
	var bySchema map[string]map[int64]bool
	for i := range qs {
		if len(qs[i].ExcludeDBs) > 0 || len(qs[i].PoolDBs) > 0 {
			ids, err := r.TableIDs(ctx)
			if err != nil {
				return nil, fmt.Errorf("eval: %w", err)
			}
			bySchema = map[string]map[int64]bool{}
			for name, id := range ids {
				sch, _, _ := strings.Cut(name, ".")
				if bySchema[sch] == nil {
					bySchema[sch] = map[int64]bool{}
				}
				bySchema[sch][id] = true
			}
			break
		}
	}
	tablesOf := func(dbs []string) map[int64]bool {
		if len(dbs) == 0 {
			return nil
		}
		out := map[int64]bool{}
		for _, d := range dbs {
			for id := range bySchema[benchload.SchemaName(d)] {
				out[id] = true
			}
		}
		return out
	}
	// One warm-up retrieval loads the snapshot, so the first question's
	// latency is not the cache fill.
	if len(qs) > 0 {
		if _, err := r.Retrieve(ctx, qs[0].Question); err != nil {
			return nil, fmt.Errorf("eval: %w", err)
		}
	}
	var pq *json.Encoder
	if opts.PerQuestion != nil {
		pq = json.NewEncoder(opts.PerQuestion)
	}
	var curve []curveSample
	var split *splitAcc
	if opts.Examples {
		accs[MethodNoExamples] = &accumulator{}
		split = newSplitAcc(len(opts.ExampleGrid))
	}
	n, unans := 0, 0
	for i := range qs {
		q := &qs[i]
		var gold []string
		if !q.Unanswerable() {
			g, err := bench.GoldTables(q)
			if err != nil {
				return nil, fmt.Errorf("eval: question %d: %w", i, err)
			}
			gold = g
		} else {
			unans++
		}
		text := q.Question
		if opts.WithEvidence && strings.TrimSpace(q.Evidence) != "" {
			text += " " + q.Evidence
		}
		ropts := retriever.RetrieveOptions{Exclude: tablesOf(q.ExcludeDBs), Pool: tablesOf(q.PoolDBs)}
		res, err := r.RetrieveWith(ctx, text, ropts)
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
			accs[fmt.Sprintf("%s%d", methodTopPrefix, k)].add(q.Kind, got, gold, hybridLat)
		}
		atr := lowerNames(res.ATR)
		accs[MethodATR].add(q.Kind, atr, gold, hybridLat+res.Timings.ATR)
		var final []string
		for _, t := range res.Chosen() {
			final = append(final, strings.ToLower(t.Table.QualifiedName()))
		}
		accs[MethodDefault].add(q.Kind, final, gold, res.Timings.Total)
		if split != nil {
			ropts.NoLearning = true
			base, err := r.RetrieveWith(ctx, text, ropts)
			if err != nil {
				return nil, fmt.Errorf("eval: question %d (%q) without examples: %w", i, text, err)
			}
			without := chosenNames(base)
			accs[MethodNoExamples].add(q.Kind, without, gold, base.Timings.Total)
			split.add(res.NearestExample, q.Kind, final, without, gold)
			if len(opts.ExampleGrid) > 0 {
				ropts.NoLearning = false
				rs, err := r.RetrieveGrid(ctx, text, ropts, opts.ExampleGrid)
				if err != nil {
					return nil, fmt.Errorf("eval: question %d (%q) grid: %w", i, text, err)
				}
				for j, gr := range rs {
					split.grid[j].add(q.Kind, chosenNames(gr), gold, 0)
				}
			}
		}
		rec := NewQuestionRecord(i, q, gold, res)
		if opts.Curve {
			curve = append(curve, curveSample{unanswerable: gold == nil, best: rec.BestLogit, coverage: res.Coverage, score: ScoreSet(final, gold), chosen: len(final)})
		}
		if pq != nil {
			if err := pq.Encode(rec); err != nil {
				return nil, fmt.Errorf("eval: write per-question record: %w", err)
			}
		}
		if opts.Progress != nil && n%200 == 0 {
			progress(opts.Progress, "%d/%d questions\n", n, len(qs))
		}
	}
	rep := &EvalReport{Benchmark: bench.Name, Questions: n, Unanswerable: unans, Default: MethodDefault, Methods: map[string]MethodStats{}}
	if f := *r.Config().AbstainFloor; !math.IsInf(f, -1) && f > -math.MaxFloat64 {
		rep.AbstainFloor = &f
	}
	if c := *r.Config().AbstainCoverage; c > 0 {
		rep.AbstainCoverage = &c
	}
	rep.AbstainEvidence = r.Config().AbstainEvidence
	for name, a := range accs {
		rep.Methods[name] = a.stats()
	}
	if opts.Curve {
		rep.AbstainCurve = abstainCurve(curve)
	}
	if split != nil {
		rep.ExampleSplit = split.report(opts.ExampleCount, opts.ExampleGrid)
	}
	return rep, nil
}

func chosenNames(res *retriever.Result) []string {
	var out []string
	for _, t := range res.Chosen() {
		out = append(out, strings.ToLower(t.Table.QualifiedName()))
	}
	return out
}

func lowerNames(ts []*retriever.TableInfo) []string {
	var out []string
	for _, t := range ts {
		out = append(out, strings.ToLower(t.QualifiedName()))
	}
	return out
}

func progress(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format, args...)
	}
}

// WriteTable prints a report as an aligned table.
func (rep *EvalReport) WriteTable(w io.Writer) {
	fmt.Fprintf(w, "benchmark %s, %d questions, %d unanswerable (default pipeline: %s)\n", rep.Benchmark, rep.Questions, rep.Unanswerable, rep.Default)
	width := 15
	for m := range rep.Methods {
		width = max(width, len(m))
	}
	fmt.Fprintf(w, "%-*s %9s %7s %8s %6s %10s %7s %7s %7s %9s\n", width, "method", "precision", "recall", "complete", "f1", "avg_tables", "p50_ms", "p95_ms", "abstain", "false_abs")
	for _, m := range MethodOrder() {
		s, ok := rep.Methods[m]
		if !ok {
			continue
		}
		fmt.Fprintf(w, "%-*s %9.3f %7.3f %8.3f %6.3f %10.2f %7.2f %7.2f %7.3f %9.3f\n", width, m, s.Precision, s.Recall, s.CompleteRecall, s.F1, s.AvgTables, s.P50Ms, s.P95Ms, s.Abstain, s.FalseAbstain)
	}
	if s, ok := rep.Methods[rep.Default]; ok && len(s.AbstainByKind) > 0 {
		kinds := make([]string, 0, len(s.AbstainByKind))
		for k := range s.AbstainByKind {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		for _, k := range kinds {
			fmt.Fprintf(w, "%s abstain on %s: %.3f\n", rep.Default, k, s.AbstainByKind[k])
		}
	}
	if len(rep.AbstainCurve) > 0 {
		writeCurve(w, rep.AbstainCurve)
	}
	if rep.ExampleSplit != nil {
		writeSplit(w, rep.ExampleSplit)
	}
}
