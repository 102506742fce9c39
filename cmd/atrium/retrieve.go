package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/atriumdb/atrium/retriever"
	"github.com/atriumdb/atrium/retriever/vocab"
)

// runRetrieve prints the tables Atrium would choose for a question, as the
// RETRIEVE statement does.
func runRetrieve(ctx context.Context, env *cliEnv, args []string) error {
	fs := flag.NewFlagSet("retrieve", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	setUsage(env, fs, "atrium retrieve --dsn DSN [flags] QUESTION",
		"Shows the tables Atrium would choose for QUESTION, with scores, reasons and join paths; no LLM is called.")
	dsn := fs.String("dsn", "", "PostgreSQL connection URL of the catalog database (required)")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	window := fs.Int("atr-window", 20, "ATR window size W")
	retain := fs.Int("atr-retain", 15, "ATR retention size R")
	candidates := fs.Int("candidates", 50, "hybrid candidates C reranked by ATR")
	noExpand := fs.Bool("no-expansion", false, "skip join-path expansion")
	noAttrs := fs.Bool("no-attribute-completion", false, "skip attribute completion (expansion adding the joined table a question asks an attribute of, as in \"customer names\", or lists with another table's rows, as in \"customers with their orders\")")
	embDim := fs.Int("embedder-dimension", 0, "alias of --embed-dimension")
	embed := embedderFlags(fs, env.getenv)
	multihop := fs.Bool("multihop", false, "MURRE multi-hop retrieval with removal (needs --llm-url)")
	llmURL := fs.String("llm-url", "", "OpenAI-compatible base URL for --multihop, e.g. http://host:8000/v1")
	llmModel := fs.String("llm-model", "", "model name for --multihop")
	atr := addATRFlags(fs)
	abst := addAbstainFlags(fs)
	if _, err := parseFlags(ctx, env, fs, args); err != nil {
		return err
	}
	question := strings.Join(fs.Args(), " ")
	if *dsn == "" {
		return usageError{"--dsn is required"}
	}
	if strings.TrimSpace(question) == "" {
		return usageError{"a question is required: atrium retrieve --dsn URL \"question\""}
	}
	if *multihop && *llmURL == "" {
		return usageError{"--multihop needs --llm-url"}
	}
	ecfg := embed()
	if ecfg.Dimension == 0 {
		ecfg.Dimension = *embDim
	}
	if err := vocab.CheckEmbedderKind(ecfg.Kind); err != nil {
		return usageError{"--embedder: " + err.Error()}
	}
	if err := atr.validate(); err != nil {
		return err
	}
	rcfg := retriever.Config{
		Candidates: *candidates, Window: *window, Retain: *retain,
		Expansion: retriever.ExpansionConfig{Disabled: *noExpand, NoAttributes: *noAttrs},
		Multihop:  retriever.MultihopConfig{Enabled: *multihop},
	}
	if err := abst.apply(&rcfg); err != nil {
		return err
	}
	var rw retriever.Rewriter
	if *llmURL != "" {
		rw = &retriever.OpenAIRewriter{URL: *llmURL, Model: *llmModel, APIKey: env.getenv("ATRIUM_LLM_API_KEY")}
	}
	log := slog.New(slog.NewTextHandler(env.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	pool, err := retriever.OpenPool(ctx, *dsn, 2**candidates, nil)
	if err != nil {
		return err
	}
	defer pool.Close()
	emb, err := resolveEmbedder(ctx, pool, ecfg, log)
	if err != nil {
		return usageError{"--embedder: " + err.Error()}
	}
	if cl, ok := emb.(io.Closer); ok {
		defer cl.Close()
	}
	// After the embedder: an onnx scorer shares the ONNX Runtime
	// environment an onnx embedder started.
	scorer, closeScorer, err := atr.build(*window, log)
	if err != nil {
		return err
	}
	defer closeScorer()
	warnScorerEmbedder(log, scorer, emb)
	r, err := retriever.New(pool, rcfg, retriever.Options{Logger: log, Embedder: emb, Rewriter: rw, Scorer: scorer})
	if err != nil {
		return err
	}
	res, err := r.Retrieve(ctx, question)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(env.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(retriever.ResultJSON(res))
	}
	tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "rank\tschema\ttable\tscore\tchosen\treason\tjoin_path")
	for _, row := range retriever.ResultRows(res) {
		cells := make([]string, len(row))
		for i, c := range row {
			cells[i] = string(c)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if rws := retriever.RewriteStrings(res.Rewrites); len(rws) > 0 {
		fmt.Fprintf(env.stdout, "read as the schema's words: %s\n", strings.Join(rws, ", "))
	}
	if res.Abstained {
		fmt.Fprintf(env.stdout, "no table chosen: %s\n", res.AbstainReason)
	}
	fmt.Fprintf(env.stdout, "threshold %.4f; %d windows; hybrid %s, atr %s, expansion %s, total %s\n",
		res.Threshold, res.Timings.Windows, res.Timings.Hybrid, res.Timings.ATR, res.Timings.Expand, res.Timings.Total)
	return nil
}

// warnScorerEmbedder logs when the lite scorer was neither trained nor
// measured with emb's vectors: retrieval works, less well than measured.
func warnScorerEmbedder(log *slog.Logger, s retriever.Scorer, emb interface{ Name() string }) {
	if emb == nil || retriever.ScorerFitsEmbedder(s, emb.Name()) {
		return
	}
	log.Warn("the ATR scorer was trained with another embedder; retrieval quality will be below what was measured for it (train-atr --embedder, or use the embedder it names)",
		"scorer_embedder", retriever.TrainedEmbedder(s), "embedder", emb.Name())
}

// abstainFlags are the abstention floors shared by retrieve, eval and
// serve: a DBA whose users meet 42P01 on questions the catalog does answer
// (or wrong tables for ones it does not) can move them without a rebuild.
type abstainFlags struct {
	floor, coverage *string
}

// addAbstainFlags registers --abstain-floor and --abstain-coverage on fs.
func addAbstainFlags(fs *flag.FlagSet) *abstainFlags {
	return &abstainFlags{
		floor:    fs.String("abstain-floor", "", fmt.Sprintf("abstain (no table chosen; a question then gets 42P01) when the best table's scorer logit is below this (default %g; -inf: never)", retriever.DefaultAbstainFloor)),
		coverage: fs.String("abstain-coverage", "", fmt.Sprintf("abstain when the chosen tables name less than this share of the question's content words (default %g; 0: off)", retriever.DefaultAbstainCoverage)),
	}
}

// apply sets cfg's floors from the flags given; unset flags keep the
// retriever's defaults.
func (f *abstainFlags) apply(cfg *retriever.Config) error {
	if *f.floor != "" {
		v, err := strconv.ParseFloat(*f.floor, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 1) {
			return usageError{fmt.Sprintf("--abstain-floor: %q is not a logit (a number, or -inf)", *f.floor)}
		}
		cfg.AbstainFloor = &v
	}
	if *f.coverage != "" {
		v, err := strconv.ParseFloat(*f.coverage, 64)
		if err != nil || math.IsNaN(v) || v < 0 || v > 1 {
			return usageError{fmt.Sprintf("--abstain-coverage: %q is not a share from 0 to 1", *f.coverage)}
		}
		cfg.AbstainCoverage = &v
	}
	return nil
}

// atrFlags are the ATR scorer flags shared by retrieve, eval and serve.
type atrFlags struct {
	scorer, model, tokenizer, device *string
	weights                          *string
	fallback                         *bool
	runtimeLib                       func() string
}

// addATRFlags registers --atr-scorer, --atr-weights, --atr-model, --atr-tokenizer,
// --atr-device, --atr-device-fallback and --onnxruntime-lib on fs.
func addATRFlags(fs *flag.FlagSet) *atrFlags {
	f := &atrFlags{
		scorer:    fs.String("atr-scorer", retriever.ScorerLite, "ATR scorer: lite (built in) or onnx (a cross-encoder, see docs/atr-model.md)"),
		model:     fs.String("atr-model", "", "ONNX model of the onnx ATR scorer"),
		tokenizer: fs.String("atr-tokenizer", "", "tokenizer.json of the onnx ATR scorer (default: beside the model)"),
		device:    fs.String("atr-device", "cpu", "where the onnx ATR scorer runs: cpu, cuda or cuda:N"),
		fallback:  fs.Bool("atr-device-fallback", false, "run the onnx ATR scorer on the CPU, with a warning, when CUDA is unavailable"),
		weights:   fs.String("atr-weights", "", "weights file of the lite ATR scorer written by atrium train-atr (default: the built-in weights)"),
	}
	// The onnx embedder's flags may have defined it already: one library
	// serves both, so share the flag rather than define it twice.
	if lib := fs.Lookup("onnxruntime-lib"); lib != nil {
		f.runtimeLib = lib.Value.String
	} else {
		v := fs.String("onnxruntime-lib", "", "onnxruntime shared library (default $ATRIUM_ONNXRUNTIME_LIB, then .deps/onnxruntime/lib/libonnxruntime.so)")
		f.runtimeLib = func() string { return *v }
	}
	return f
}

// build returns the scorer the flags select, checked against ATR window
// size window, and the function that frees it.
func (f *atrFlags) build(window int, log *slog.Logger) (retriever.Scorer, func() error, error) {
	if err := f.validate(); err != nil {
		return nil, nil, err
	}
	s, closeFn, err := retriever.NewScorer(retriever.ScorerConfig{Kind: strings.ToLower(*f.scorer), LiteWeights: *f.weights, ONNX: retriever.ONNXConfig{
		ModelPath: *f.model, TokenizerPath: *f.tokenizer, Device: *f.device, DeviceFallback: *f.fallback,
		RuntimeLib: f.runtimeLib(), Logger: log,
	}})
	if err != nil {
		return nil, nil, err
	}
	if err := retriever.CheckWindow(s, window); err != nil {
		_ = closeFn()
		return nil, nil, usageError{err.Error()}
	}
	return s, closeFn, nil
}

// validate reports the flags' usage errors without loading anything, so
// that a command can report them before it connects anywhere.
func (f *atrFlags) validate() error {
	kind := strings.ToLower(*f.scorer)
	if kind != retriever.ScorerLite && kind != retriever.ScorerONNX {
		return usageError{fmt.Sprintf("--atr-scorer %q: want lite or onnx", *f.scorer)}
	}
	if kind == retriever.ScorerONNX && *f.model == "" {
		return usageError{"--atr-scorer onnx needs --atr-model"}
	}
	if kind == retriever.ScorerLite && (*f.model != "" || *f.tokenizer != "") {
		return usageError{"--atr-model and --atr-tokenizer need --atr-scorer onnx"}
	}
	if kind == retriever.ScorerONNX && *f.weights != "" {
		return usageError{"--atr-weights is for --atr-scorer lite"}
	}
	if _, _, err := retriever.ParseATRDevice(*f.device); err != nil {
		return usageError{"--atr-device: " + err.Error()}
	}
	return nil
}
