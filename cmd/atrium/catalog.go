package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/atriumdb/atrium/catalog"
	"github.com/atriumdb/atrium/internal/telemetry"
	"github.com/atriumdb/atrium/retriever/vocab"
)

// runCatalog dispatches `atrium catalog sync|watch`.
func runCatalog(ctx context.Context, env *cliEnv, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintf(env.stderr, "Usage:\n  atrium catalog sync  [flags]   build or refresh the table catalog once\n  atrium catalog watch [flags]   keep the catalog current as the schema changes\n\nRun 'atrium catalog sync --help' for the flags.\n")
		if len(args) == 0 {
			return usageError{"catalog needs a subcommand: sync or watch"}
		}
		return flag.ErrHelp
	}
	switch args[0] {
	case "sync":
		return runCatalogSync(ctx, env, args[1:], false)
	case "watch":
		return runCatalogSync(ctx, env, args[1:], true)
	default:
		return usageError{fmt.Sprintf("unknown catalog subcommand %q (want sync or watch)", args[0])}
	}
}

// embedderFlags registers the flags that choose an embedder; serve,
// retrieve and eval can register the same set.
func embedderFlags(fs *flag.FlagSet, getenv func(string) string) func() catalog.EmbedderConfig {
	kind := fs.String("embedder", vocab.DefaultEmbedderKind, "embedder: "+vocab.EmbedderKinds+" (words and builtin are built in; see docs/retrieval.md)")
	dim := fs.Int("embed-dimension", 0, "embedding dimension (builtin default 256; words fixed at 356; openai: requested dimensions)")
	model := fs.String("onnx-model", "", "ONNX sentence-embedding model file (embedder onnx)")
	tok := fs.String("onnx-tokenizer", "", "Hugging Face tokenizer.json of the model (default: tokenizer.json next to the model)")
	device := fs.String("device", "cpu", "where the onnx embedder runs: cpu or cuda")
	lib := fs.String("onnxruntime-lib", "", "path of libonnxruntime.so (default $ATRIUM_ONNXRUNTIME_LIB, then .deps/onnxruntime/lib)")
	url := fs.String("embed-url", "", "OpenAI-compatible base URL for the openai embedder, e.g. http://host:8000/v1")
	emodel := fs.String("embed-model", "", "model name for the openai embedder")
	return func() catalog.EmbedderConfig {
		return catalog.EmbedderConfig{
			Kind: *kind, Dimension: *dim, ModelPath: *model, TokenizerPath: *tok, Device: *device,
			RuntimeLib: *lib, URL: *url, Model: *emodel, APIKey: getenv("ATRIUM_EMBED_API_KEY"),
		}
	}
}

// buildEmbedder builds the embedder cfg selects (catalog sync and watch,
// eval, train-atr), with the function that frees it; an unknown kind is a
// usage error.
func buildEmbedder(cfg catalog.EmbedderConfig, log *slog.Logger) (catalog.Embedder, func(), error) {
	cfg.Logger = log
	emb, err := vocab.NewEmbedder(cfg)
	if err != nil {
		if errors.Is(err, catalog.ErrUnknownEmbedder) {
			return nil, nil, usageError{"--embedder: " + err.Error()}
		}
		return nil, nil, fmt.Errorf("embedder: %w", err)
	}
	return emb, func() {
		if c, ok := emb.(io.Closer); ok {
			_ = c.Close()
		}
	}, nil
}

func runCatalogSync(ctx context.Context, env *cliEnv, args []string, watch bool) error {
	name := "catalog sync"
	if watch {
		name = "catalog watch"
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	if watch {
		setUsage(env, fs, "atrium catalog watch --dsn DSN [flags]",
			"Syncs the catalog, then follows DDL (an event trigger and NOTIFY) and syncs in full every --interval, until interrupted.")
	} else {
		setUsage(env, fs, "atrium catalog sync --dsn DSN [flags]",
			"Builds or refreshes the table catalog once: tables, columns, comments, sampled values, embeddings and the join graph.")
	}
	dsn := fs.String("dsn", "", "PostgreSQL connection URL of the database to catalogue (required)")
	catalogDSN := fs.String("catalog-dsn", "", "database that holds the atrium catalog schema (default: --dsn)")
	schemas := fs.String("schemas", "", "comma-separated glob patterns of schemas to catalogue (default: all)")
	exclude := fs.String("exclude", "", "comma-separated glob patterns of schemas (or schema.table) to leave out")
	embed := embedderFlags(fs, env.getenv)
	llmURL := fs.String("llm-url", "", "OpenAI-compatible base URL of the LLM that writes table purposes and column descriptions (default: none)")
	llmModel := fs.String("llm-model", "", "LLM model name (required with --llm-url)")
	llmTimeout := fs.Duration("llm-timeout", 60*time.Second, "timeout of one LLM call")
	llmConc := fs.Int("llm-concurrency", 4, "concurrent LLM calls")
	proposeGlossary := fs.Bool("propose-glossary", true, "with --llm-url: also ask the LLM for glossary terms from the COMMENTs of each table it describes (only tables with comments), stored in atrium.glossary as unreviewed, never over an existing term")
	wait := fs.Bool("wait", false, "wait for a sync already running instead of exiting")
	migrate := fs.Bool("migrate", true, "create or upgrade the catalog schema when it is missing or old")
	force := fs.Bool("force", false, "rebuild every table even when unchanged")
	sampleRows := fs.Int("sample-rows", 100, "rows sampled per table")
	interval := fs.Duration("interval", 5*time.Minute, "watch: full sync interval as a fallback to DDL notifications")
	progress := fs.String("progress", "auto", "progress line on stderr: auto (when a terminal), always or never")
	level := fs.String("log-level", "info", "log level: debug, info, warn or error")
	if _, err := parseFlags(ctx, env, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	if *dsn == "" {
		return usageError{"--dsn is required"}
	}
	if *llmURL != "" && *llmModel == "" {
		return usageError{"--llm-model is required with --llm-url"}
	}
	lvl, err := telemetry.ParseLevel(*level)
	if err != nil {
		return usageError{"--log-level: " + err.Error()}
	}
	log := slog.New(slog.NewTextHandler(env.stderr, &slog.HandlerOptions{Level: lvl}))

	emb, closeEmb, err := buildEmbedder(embed(), log)
	if err != nil {
		return err
	}
	defer closeEmb()
	src, err := pgxpool.New(ctx, *dsn)
	if err != nil {
		return fmt.Errorf("connect to --dsn: %w", err)
	}
	defer src.Close()
	cat := src
	if *catalogDSN != "" {
		if cat, err = pgxpool.New(ctx, *catalogDSN); err != nil {
			return fmt.Errorf("connect to --catalog-dsn: %w", err)
		}
		defer cat.Close()
	}
	opts := catalog.SyncOptions{
		Source: src, Embedder: emb, Logger: log, Wait: *wait, AutoMigrate: *migrate, Force: *force,
		SampleRows: *sampleRows, LLMTimeout: *llmTimeout, LLMConcurrency: *llmConc,
	}
	if *schemas != "" {
		opts.Schemas = strings.Split(*schemas, ",")
	}
	if *exclude != "" {
		opts.Exclude = strings.Split(*exclude, ",")
	}
	if *llmURL != "" {
		d, err := catalog.NewLLMDescriber(catalog.LLMConfig{URL: *llmURL, Model: *llmModel,
			APIKey: env.getenv("ATRIUM_LLM_API_KEY"), Timeout: *llmTimeout, Concurrency: *llmConc})
		if err != nil {
			return err
		}
		opts.LLM = d
		if *proposeGlossary {
			opts.Glossary = d
		}
	}
	switch *progress {
	case "always":
		opts.Progress = catalog.TerminalProgress(env.stderr)
	case "auto":
		if telemetry.IsTerminal(env.stderr) {
			opts.Progress = catalog.TerminalProgress(env.stderr)
		}
	case "never":
	default:
		return usageError{"--progress must be auto, always or never"}
	}
	if watch {
		err := catalog.Watch(ctx, cat, catalog.WatchOptions{Sync: opts, Interval: *interval})
		if errors.Is(err, context.Canceled) {
			return nil
		}
		return err
	}
	st, err := catalog.Sync(ctx, cat, opts)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "catalog version %d: %d relations, %d rebuilt, %d unchanged, %d skipped, %d removed; %d foreign-key and %d inferred join edges recomputed; %s\n",
		st.Version, st.Tables, st.Rebuilt, st.Unchanged, st.Skipped, st.Removed, st.ForeignKeys, st.Inferred, st.Duration.Round(time.Millisecond))
	if st.GlossaryAdded > 0 {
		fmt.Fprintf(env.stdout, "%d glossary terms proposed from comments, unreviewed: see `atrium glossary list --unreviewed`\n", st.GlossaryAdded)
	}
	return nil
}
