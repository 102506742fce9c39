package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/atriumdb/atrium/catalog/benchload"
	"github.com/atriumdb/atrium/retriever"
	"github.com/atriumdb/atrium/retriever/evaluate"
)

// runEval measures table retrieval on a Spider-format benchmark: it loads
// the benchmark into a dedicated database, syncs its catalog, runs every
// question and prints precision, recall, complete recall, F1, tables
// returned and latency per method.
func runEval(ctx context.Context, env *cliEnv, args []string) (err error) {
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	setUsage(env, fs, "atrium eval --bench DIR [flags]",
		"Measures table retrieval on a Spider-format benchmark: loads its schemas (and rows, where databases/<db_id>.sql exists) into a dedicated database, syncs a catalog, and reports precision, recall, complete recall, F1, table counts, latency and abstention per method.")
	bench := fs.String("bench", "", "benchmark directory: tables.json, dev.json or questions.json, optional databases/<db_id>.sql (required)")
	jsonOut := fs.String("json", "", "also write the report as JSON to this file")
	limit := fs.Int("limit", 0, "evaluate only the first N questions (0: all)")
	evidence := fs.Bool("with-evidence", false, "append each question's evidence to it")
	dsn := fs.String("dsn", benchload.DefaultServerDSN, "PostgreSQL server; a dedicated database atrium_eval_<benchmark> is created there")
	questions := fs.String("questions", "", "questions file: a name in the benchmark directory or a path (default dev.json, else questions.json)")
	keep := fs.Bool("keep-db", false, "keep the dedicated database afterwards")
	window := fs.Int("atr-window", 20, "ATR window size W")
	retain := fs.Int("atr-retain", 15, "ATR retention size R")
	noExpand := fs.Bool("no-expansion", false, "report the default pipeline without join-path expansion")
	noAttrs := fs.Bool("no-attribute-completion", false, "report the default pipeline without attribute completion (expansion adding the joined table a question asks an attribute of, or lists another table's rows as its own)")
	verbose := fs.Bool("verbose", false, "log progress")
	unanswerable := fs.String("unanswerable", "", "questions file (a path) appended to the benchmark's: questions with empty gold SQL count as unanswerable, exclude_dbs/pool_dbs shape each one's pool")
	perQuestion := fs.String("per-question", "", "write one JSON line per question to this file: gold, candidates, chosen set, why each lost gold table was lost")
	topWhenEmpty := fs.Bool("top-when-empty", retriever.DefaultTopWhenEmpty, "when ATR's threshold outranks every table, select the best one and let the abstention floors decide (docs/retrieval.md, step 38)")
	coverCos := fs.Float64("abstain-coverage-cosine", 0, "also count a question word as named by the selection when its word vector reaches this cosine with a word the selected tables carry (0: off, the shipped behaviour)")
	abstainEv := fs.String("abstain-evidence", "", "also abstain when the selection names less than COV of the question's content words and its best embedding cosine is below COS, as COV:COS; word:COV:COS compares the word-vector cosine instead (default: off)")
	schemaRewrite := fs.Float64("schema-rewrite", 0, "least vocabulary-bridge weight at which a question word is said in a candidate table's words before scoring (0: the shipped default; negative: off)")
	curve := fs.Bool("abstain-curve", false, "print the abstention trade-off over floors (runs with no floor and replays each)")
	examples := fs.String("examples", "", "split: per database, questions at even positions become examples (atrium.examples, with their gold SQL) and the others are evaluated with and without them")
	exampleWeight := fs.Float64("example-weight", 0, "logit bonus bound for an example's tables (0: the shipped default; negative: off)")
	exampleGate := fs.Float64("example-gate", 0, "least question similarity at which an example lends its tables a bonus (0: the shipped default)")
	examplePenalty := fs.Float64("example-penalty", 0, "logit penalty bound for tables a close example does not name (0: the shipped default; negative: none)")
	exampleGrid := fs.String("examples-grid", "", "with --examples split, also score each weight:gate:penalty[:neighbours[:spread[:penalty_gate]]] entry of this comma-separated list (tuning, on training questions only)")
	embed := embedderFlags(fs, env.getenv)
	atr := addATRFlags(fs)
	abst := addAbstainFlags(fs)
	if _, err := parseFlags(ctx, env, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	if *bench == "" {
		return usageError{"--bench is required"}
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelInfo
	}
	log := slog.New(slog.NewTextHandler(env.stderr, &slog.HandlerOptions{Level: level}))
	emb, closeEmb, err := buildEmbedder(embed(), log)
	if err != nil {
		return err
	}
	defer closeEmb()
	// After the embedder: an onnx scorer shares the ONNX Runtime
	// environment an onnx embedder started.
	scorer, closeScorer, err := atr.build(*window, log)
	if err != nil {
		return err
	}
	defer closeScorer()
	warnScorerEmbedder(log, scorer, emb)
	cfg := retriever.Config{Window: *window, Retain: *retain, Expansion: retriever.ExpansionConfig{Disabled: *noExpand, NoAttributes: *noAttrs},
		ExampleWeight: *exampleWeight, ExampleGate: *exampleGate, ExamplePenalty: *examplePenalty}
	if *examples != "" && *examples != "split" {
		return usageError{fmt.Sprintf("--examples: unknown mode %q (want split)", *examples)}
	}
	var grid []retriever.ExampleParams
	if *exampleGrid != "" {
		if *examples == "" {
			return usageError{"--examples-grid needs --examples split"}
		}
		for _, triple := range strings.Split(*exampleGrid, ",") {
			var v [6]float64
			parts := strings.Split(strings.TrimSpace(triple), ":")
			ok := len(parts) >= 3 && len(parts) <= 6
			for i := 0; ok && i < len(parts); i++ {
				f, err := strconv.ParseFloat(parts[i], 64)
				ok = err == nil
				v[i] = f
			}
			if !ok {
				return usageError{fmt.Sprintf("--examples-grid: %q is not weight:gate:penalty[:neighbours[:spread[:penalty_gate]]]", triple)}
			}
			grid = append(grid, retriever.ExampleParams{Weight: v[0], Gate: v[1], Penalty: v[2], Neighbours: int(v[3]), Spread: v[4], PenaltyGate: v[5]})
		}
	}
	cfg.SchemaRewrite = *schemaRewrite
	if *coverCos < 0 || *coverCos > 1 {
		return usageError{"--abstain-coverage-cosine must be from 0 to 1"}
	}
	cfg.AbstainCoverageCosine = *coverCos
	cfg.TopWhenEmpty = topWhenEmpty
	if err := abst.apply(&cfg); err != nil {
		return err
	}
	if *abstainEv != "" {
		spec, word := strings.CutPrefix(*abstainEv, "word:")
		cov, cos, ok := strings.Cut(spec, ":")
		c, err1 := strconv.ParseFloat(cov, 64)
		v, err2 := strconv.ParseFloat(cos, 64)
		if !ok || err1 != nil || err2 != nil {
			return usageError{fmt.Sprintf("--abstain-evidence: %q is not [word:]coverage:cosine", *abstainEv)}
		}
		cfg.AbstainEvidence = &retriever.AbstainEvidence{Coverage: c, Cosine: v, Word: word}
	}
	if *curve {
		off, zero := math.Inf(-1), 0.0
		cfg.AbstainFloor, cfg.AbstainCoverage = &off, &zero
	}
	var pq io.Writer
	if *perQuestion != "" {
		f, err := os.Create(*perQuestion)
		if err != nil {
			return fmt.Errorf("per-question file: %w", err)
		}
		defer f.Close()
		bw := bufio.NewWriter(f)
		pq = bw
		defer func() {
			if ferr := bw.Flush(); ferr != nil && err == nil {
				err = fmt.Errorf("per-question file: %w", ferr)
			}
		}()
	}
	rep, err := evaluate.RunEval(ctx, evaluate.EvalJob{
		BenchDir: *bench, QuestionsFile: *questions, ServerDSN: *dsn, Limit: *limit,
		WithEvidence: *evidence, KeepDB: *keep, Progress: env.stderr, Logger: log, Scorer: scorer, Embedder: emb,
		Config: cfg, Unanswerable: *unanswerable, PerQuestion: pq, Curve: *curve,
		Examples: *examples, ExampleGrid: grid,
	})
	if err != nil {
		return err
	}
	rep.WriteTable(env.stdout)
	if *jsonOut != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(*jsonOut, append(b, '\n'), 0o644); err != nil {
			return fmt.Errorf("write report: %w", err)
		}
	}
	return nil
}
