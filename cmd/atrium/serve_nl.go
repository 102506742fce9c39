package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/atriumdb/atrium/proxy/resultcache"
	"github.com/atriumdb/atrium/question"
	"github.com/atriumdb/atrium/sqlgen"
)

// nlFlags are serve's flags for natural-language questions and their cache.
type nlFlags struct {
	llmURL, llmModel   string
	llmTimeout         time.Duration
	llmRetries         int
	rowLimit           int
	statementTimeout   time.Duration
	maxRepairs         int
	redisURL           string
	cacheTTL, sqlTTL   time.Duration
	cacheEntryBytes    int
	cacheMemoryBytes   int64
	catalogVersionPoll time.Duration
	curatorRole        string
}

// addNLFlags declares the NL flags on serve's FlagSet.
func addNLFlags(fs *flag.FlagSet) *nlFlags {
	f := &nlFlags{}
	fs.StringVar(&f.llmURL, "llm-url", "", "OpenAI-compatible chat-completions `URL` for questions, e.g. http://host:8000/v1 (API key from ATRIUM_LLM_API_KEY); without it questions report what RETRIEVE found")
	fs.StringVar(&f.llmModel, "llm-model", "gpt-4o-mini", "model `name` sent to --llm-url")
	fs.DurationVar(&f.llmTimeout, "llm-timeout", 60*time.Second, "how long one generation may take, retries included")
	fs.IntVar(&f.llmRetries, "llm-retries", 3, "retries of an LLM request on HTTP 429/5xx or connection failure, with back-off")
	fs.IntVar(&f.rowLimit, "nl-row-limit", 1000, "most rows a question returns (a NOTICE says when rows were cut)")
	fs.DurationVar(&f.statementTimeout, "nl-statement-timeout", 30*time.Second, "statement_timeout for generated SQL")
	fs.IntVar(&f.maxRepairs, "nl-max-repairs", 2, "times failed generated SQL is sent back to the LLM with its error (0: none)")
	fs.StringVar(&f.redisURL, "redis", "", "result cache `URL`: redis://host:port/db, rediss://..., redis+cluster://host:port?addr=..., redis+sentinel://host:port?master_name=...; default an in-process cache")
	fs.DurationVar(&f.cacheTTL, "cache-ttl", 5*time.Minute, "how long a question's rows are cached (0: rows are not cached)")
	fs.DurationVar(&f.sqlTTL, "sql-cache-ttl", 24*time.Hour, "how long a question's generated SQL is cached, to re-run it without the LLM (0: not cached)")
	fs.IntVar(&f.cacheEntryBytes, "cache-max-entry-bytes", 1<<20, "largest cached result in `bytes`; bigger results keep only their SQL")
	fs.Int64Var(&f.cacheMemoryBytes, "cache-memory-bytes", 64<<20, "size of the in-process cache (without --redis) in `bytes`")
	fs.DurationVar(&f.catalogVersionPoll, "catalog-version-poll", time.Second, "how often the catalog version is re-read; a catalog change invalidates cached answers within this time")
	fs.StringVar(&f.curatorRole, "nl-curator-role", "", "`role` whose members' feedback is promoted to atrium.examples at once when it is a candidate (a good answer, or a corrected SQL that validated); default none: curators promote with SELECT atrium.promote_feedback(id)")
	return f
}

// nlDeps are what the NL handler needs from the rest of serve.
type nlDeps struct {
	// Retriever chooses tables (the catalog retriever).
	Retriever question.Retriever
	// Catalog is the catalog database (for atrium.catalog_state.version).
	Catalog sqlgen.RowQuerier
	Logger  *slog.Logger
	// Registerer receives metrics; nil registers none.
	Registerer prometheus.Registerer
	// OnQuestion receives every finished question's record (query log,
	// retrieval and LLM metrics); nil: none.
	OnQuestion func(ctx context.Context, r sqlgen.QuestionRecord)
	// VersionGauge, when set, shows the catalog version questions are
	// keyed on (atrium_catalog_version).
	VersionGauge prometheus.Gauge
	// Feedback records /* nl-feedback: ... */ in the catalog database;
	// nil refuses feedback.
	Feedback question.FeedbackStore
}

// gaugedVersion is a sqlgen.VersionSource that also sets a gauge.
type gaugedVersion struct {
	src   sqlgen.VersionSource
	gauge prometheus.Gauge
}

func (g gaugedVersion) CatalogVersion(ctx context.Context) (int64, error) {
	v, err := g.src.CatalogVersion(ctx)
	if err == nil {
		g.gauge.Set(float64(v))
	}
	return v, err
}

// nlHandlerFromFlags builds the question layer (the proxy.Handler for
// RETRIEVE and natural-language questions) from serve's flags. The returned close function releases the cache's
// connections; call it after the proxy has shut down.
func nlHandlerFromFlags(ctx context.Context, env *cliEnv, f *nlFlags, deps nlDeps) (*question.Handler, func() error, error) {
	if deps.Retriever == nil || deps.Catalog == nil {
		return nil, nil, errors.New("natural-language questions need the catalog retriever")
	}
	log := deps.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if f.rowLimit <= 0 {
		return nil, nil, usageError{"--nl-row-limit must be positive"}
	}
	if f.statementTimeout <= 0 {
		return nil, nil, usageError{"--nl-statement-timeout must be positive"}
	}
	if f.cacheTTL < 0 || f.sqlTTL < 0 {
		return nil, nil, usageError{"--cache-ttl and --sql-cache-ttl cannot be negative"}
	}

	var gen sqlgen.Generator
	model := ""
	if f.llmURL != "" {
		cfg := sqlgen.OpenAIConfig{URL: f.llmURL, Model: f.llmModel, APIKey: env.getenv("ATRIUM_LLM_API_KEY"),
			Timeout: f.llmTimeout, MaxRetries: f.llmRetries}
		if f.llmRetries == 0 {
			cfg.MaxRetries = -1
		}
		o, err := sqlgen.NewOpenAI(cfg, sqlgen.OpenAIOptions{Logger: log})
		if err != nil {
			return nil, nil, usageError{"--llm-url: " + err.Error()}
		}
		gen = o
		model = o.Endpoint() + " " + f.llmModel + " t=" + strconv.FormatFloat(cfg.Temperature, 'g', -1, 64)
		log.Info("questions answered with an LLM", "llm", cfg.String())
	} else {
		log.Info("no --llm-url: questions report what RETRIEVE found instead of answering")
	}

	var store resultcache.Store
	if f.redisURL != "" {
		client, err := resultcache.OpenRedis(f.redisURL)
		if err != nil {
			return nil, nil, usageError{"--redis: " + err.Error()}
		}
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		if err := client.Ping(pctx).Err(); err != nil {
			// Not fatal: the cache is an optimisation and Redis may come
			// up later; queries are served uncached meanwhile.
			log.Warn("result cache Redis unreachable at start-up; serving uncached until it answers", "err", err)
		}
		cancel()
		store = resultcache.NewRedis(client)
	} else {
		store = resultcache.NewLRU(f.cacheMemoryBytes, nil)
	}
	var cache *resultcache.Cache
	if f.cacheTTL > 0 || f.sqlTTL > 0 {
		cache = resultcache.New(resultcache.Config{
			TTL: zeroDisables(f.cacheTTL), SQLTTL: zeroDisables(f.sqlTTL), MaxEntryBytes: f.cacheEntryBytes,
		}, store, resultcache.Options{Logger: log, Registerer: deps.Registerer})
	}
	var versions sqlgen.VersionSource = sqlgen.NewCatalogVersion(deps.Catalog, f.catalogVersionPoll)
	if deps.VersionGauge != nil {
		versions = gaugedVersion{src: versions, gauge: deps.VersionGauge}
	}
	opts := question.Options{
		Retriever: deps.Retriever, Generator: gen, Versions: versions,
		Logger: log, Registerer: deps.Registerer, OnQuestion: deps.OnQuestion, Feedback: deps.Feedback,
	}
	if cache != nil {
		opts.Cache = cache
	}
	p, err := question.New(question.Config{NL: sqlgen.Config{
		RowLimit: f.rowLimit, StatementTimeout: f.statementTimeout, MaxRepairs: zeroDisables(f.maxRepairs),
		GenerateTimeout: f.llmTimeout + 30*time.Second, Model: model, MaxCachedBytes: f.cacheEntryBytes,
	}, Feedback: question.FeedbackConfig{CuratorRole: f.curatorRole}}, opts)
	if err != nil {
		store.Close()
		return nil, nil, fmt.Errorf("natural-language handler: %w", err)
	}
	return p, store.Close, nil
}

// zeroDisables maps a flag's 0 ("none") to the -1 that package configs use
// for "none" (their 0 means "default").
func zeroDisables[T int | time.Duration](v T) T {
	if v == 0 {
		return -1
	}
	return v
}
