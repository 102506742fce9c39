package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/atriumdb/atrium/catalog"
	"github.com/atriumdb/atrium/internal/querylog"
	"github.com/atriumdb/atrium/internal/telemetry"
	"github.com/atriumdb/atrium/internal/telemetry/proxymetrics"
	"github.com/atriumdb/atrium/migrations"
	"github.com/atriumdb/atrium/proxy"
	"github.com/atriumdb/atrium/question"
	"github.com/atriumdb/atrium/retriever"
	"github.com/atriumdb/atrium/retriever/vocab"
)

// serveFlags are serve's own flags (the proxy, logging and the catalog);
// the NL and operations flags are declared by addNLFlags and addOpsFlags.
type serveFlags struct {
	listen, upstream, upSSL, upRoot, tlsCert, tlsKey string
	maxConns, maxMsg, maxPortal, maxStartup          int
	idle, shutdown, connectTimeout, startupPacket    time.Duration
	logLevel, logFormat                              string

	catalogDSN, catalogReadDSN string
	catalogWatch               bool
	watchInterval              time.Duration
	watchSchemas, watchExclude string
	migrate                    bool
	embed                      func() catalog.EmbedderConfig
	candidates, window, retain int
	atr                        *atrFlags
	abstain                    *abstainFlags
	multihop                   bool
}

func addServeFlags(fs *flag.FlagSet, env *cliEnv) *serveFlags {
	f := &serveFlags{}
	fs.StringVar(&f.listen, "listen", proxy.DefaultListen, "`address` (host:port) Atrium listens on for PostgreSQL clients")
	fs.StringVar(&f.upstream, "upstream", proxy.DefaultUpstream, "`address` (host:port) of the PostgreSQL server behind Atrium")
	fs.StringVar(&f.upSSL, "upstream-sslmode", "prefer", "TLS to the upstream: disable, prefer, require or verify-full")
	fs.StringVar(&f.upRoot, "upstream-sslrootcert", "", "PEM `file` of CAs trusted for --upstream-sslmode=verify-full (default: system roots)")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "PEM certificate `file` presented to clients that ask for TLS (with --tls-key)")
	fs.StringVar(&f.tlsKey, "tls-key", "", "PEM private key `file` for --tls-cert")
	fs.IntVar(&f.maxConns, "max-connections", proxy.DefaultMaxConnections, "most concurrent client sessions (connections past their startup packet); more are refused (SQLSTATE 53300)")
	fs.IntVar(&f.maxStartup, "max-startup-connections", proxy.DefaultMaxStartupConns, "most connections that have not sent their startup packet yet; beyond it the oldest is closed")
	fs.DurationVar(&f.startupPacket, "startup-packet-timeout", proxy.DefaultStartupPacket, "close a connection that sends no startup packet for this long")
	fs.IntVar(&f.maxMsg, "max-message-size", proxy.DefaultMaxMessageSize, "largest client message body in `bytes`; larger ones are refused (SQLSTATE 54000); default PostgreSQL's own limit")
	fs.IntVar(&f.maxPortal, "max-portal-buffer", proxy.DefaultMaxPortalBuffer, "most `bytes` of a question's rows a session holds for a client fetching them with a row limit (JDBC fetch size); more fail with SQLSTATE 54000")
	fs.DurationVar(&f.idle, "idle-timeout", 0, "close client sessions idle this long (0: never)")
	fs.DurationVar(&f.shutdown, "shutdown-timeout", proxy.DefaultShutdownTimeout, "on SIGTERM, how long sessions may finish their transaction before they are closed")
	fs.DurationVar(&f.connectTimeout, "connect-timeout", proxy.DefaultConnectTimeout, "timeout for connecting to the upstream")
	fs.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn or error (reloaded on SIGHUP)")
	fs.StringVar(&f.logFormat, "log-format", telemetry.LogFormatAuto, "log format: auto (text on a terminal, JSON otherwise), text or json")

	fs.StringVar(&f.catalogDSN, "catalog-dsn", "", "PostgreSQL connection URL of the database holding the atrium catalog (also the query log); without it ordinary SQL is proxied but RETRIEVE and questions fail with SQLSTATE 55000")
	fs.StringVar(&f.catalogReadDSN, "catalog-read-dsn", "", "connection URL for catalog reads (retrieval), e.g. a streaming replica (default: --catalog-dsn)")
	fs.BoolVar(&f.catalogWatch, "catalog-watch", false, "keep the catalog of the tables in --catalog-dsn's database current, as 'atrium catalog watch' does (run it on one instance)")
	fs.DurationVar(&f.watchInterval, "catalog-watch-interval", 5*time.Minute, "with --catalog-watch: full sync interval, the fallback to DDL notifications")
	fs.StringVar(&f.watchSchemas, "catalog-schemas", "", "with --catalog-watch: comma-separated glob patterns of schemas to catalogue (default: all)")
	fs.StringVar(&f.watchExclude, "catalog-exclude", "", "with --catalog-watch: comma-separated glob patterns of schemas (or schema.table) to leave out")
	fs.BoolVar(&f.migrate, "migrate", false, "create or upgrade the catalog schema in --catalog-dsn at start-up (as 'atrium migrate' does)")
	f.embed = embedderFlags(fs, env.getenv)
	fs.IntVar(&f.candidates, "candidates", 50, "hybrid candidates C reranked by ATR")
	fs.IntVar(&f.window, "atr-window", 20, "ATR window size W")
	fs.IntVar(&f.retain, "atr-retain", 15, "ATR retention size R")
	f.atr = addATRFlags(fs)
	f.abstain = addAbstainFlags(fs)
	fs.BoolVar(&f.multihop, "multihop", false, "MURRE multi-hop retrieval with removal (uses --llm-url to rewrite the question)")
	return f
}

// runServe runs the proxy until SIGINT/SIGTERM (ctx), then shuts it down
// gracefully: /readyz fails at once, sessions finish their transaction for up
// to --shutdown-timeout, then the catalog watcher stops, the query log is
// flushed and the admin server, the cache and the catalog pools close.
func runServe(ctx context.Context, env *cliEnv, args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	setUsage(env, fs, "atrium serve --upstream URL [--listen ADDR] [flags]",
		"Runs the proxy: clients connect to --listen as to PostgreSQL; ordinary SQL passes to the upstream server, questions go through retrieval and the LLM.")
	sf := addServeFlags(fs, env)
	nlf := addNLFlags(fs)
	opsf := addOpsFlags(fs)
	st, err := parseFlags(ctx, env, fs, args)
	if err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	level, err := telemetry.ParseLevel(sf.logLevel)
	if err != nil {
		return usageError{"--log-level: " + err.Error()}
	}
	var lv slog.LevelVar
	lv.Set(level)
	log, err := telemetry.NewLoggerLevel(env.stderr, sf.logFormat, &lv)
	if err != nil {
		return usageError{"--log-format: " + err.Error()}
	}
	cfg := proxy.Config{
		Upstream: sf.upstream, UpstreamSSLMode: sf.upSSL, UpstreamSSLRootCert: sf.upRoot,
		TLSCert: sf.tlsCert, TLSKey: sf.tlsKey, MaxConnections: sf.maxConns, MaxMessageSize: sf.maxMsg,
		MaxPortalBuffer: sf.maxPortal, MaxStartupConnections: sf.maxStartup, StartupPacketTimeout: sf.startupPacket,
		IdleTimeout: sf.idle, ShutdownTimeout: sf.shutdown, ConnectTimeout: sf.connectTimeout,
	}
	if err := cfg.Validate(); err != nil {
		return usageError{err.Error()}
	}
	if err := sf.validate(nlf); err != nil {
		return err
	}
	if err := vocab.CheckEmbedderKind(sf.embed().Kind); err != nil {
		return usageError{"--embedder: " + err.Error()}
	}
	log.Info("atrium starting", append([]any{"version", version}, st.logAttrs()...)...)

	// The catalog: pools, embedder, retriever.
	cat, err := openCatalog(ctx, sf, nlf, env, log)
	if err != nil {
		return err
	}
	defer cat.close()

	var listening atomic.Bool
	o, err := startOps(ctx, opsf, opsDeps{Logger: log, Listening: listening.Load, Upstream: cfg.Upstream,
		Catalog: cat.pinger(), QueryLogDB: cat.writeDB()})
	if err != nil {
		return err
	}
	opsClosed := false
	closeOps := func() {
		if opsClosed {
			return
		}
		opsClosed = true
		cctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if err := o.Close(cctx); err != nil {
			log.Warn("closing the admin server and query log", "err", err)
		}
	}
	defer closeOps()

	handlers := proxy.Handlers{proxy.VersionHandler(version)}
	closeNL := func() error { return nil }
	if cat.ret == nil {
		handlers = append(handlers, noCatalogHandler{})
		log.Warn("no --catalog-dsn: ordinary SQL is proxied; RETRIEVE and questions answer SQLSTATE 55000 until Atrium is started with a catalog")
	} else {
		rec := &recorder{ops: o}
		nl, closeFn, err := nlHandlerFromFlags(ctx, env, nlf, nlDeps{
			Retriever: cat.ret, Catalog: cat.read, Logger: log, Registerer: o.Registry,
			OnQuestion: rec.question, VersionGauge: o.Metrics.Catalog.Version,
			// Feedback is written synchronously to the catalog's read-write
			// pool, where the query log goes too.
			Feedback: question.NewFeedbackDB(cat.write),
		})
		if err != nil {
			return err
		}
		closeNL = closeFn
		handlers = append(handlers, nl)
	}
	defer func() {
		if err := closeNL(); err != nil {
			log.Warn("closing the result cache", "err", err)
		}
	}()

	obs := proxymetrics.New(o.Metrics.Proxy)
	srv, err := proxy.NewServer(cfg, proxy.Options{Logger: log, Handler: handlers, Observer: obs, Version: version})
	if err != nil {
		return usageError{err.Error()}
	}
	proxymetrics.Traffic(o.Metrics.Proxy, srv)

	// Background work that ends with the server: SIGHUP reloads and the
	// catalog watcher.
	bg, stopBG := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	defer func() {
		stopBG()
		wg.Wait()
	}()
	if err := startReload(bg, st, log, o.opsReloadables(&lv)); err != nil {
		return err
	}
	if sf.catalogWatch {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cat.watch(bg, sf, o.Metrics.Catalog, log)
		}()
	}

	l, err := net.Listen("tcp", sf.listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", sf.listen, err)
	}
	// From here the kernel queues clients until Serve accepts them.
	listening.Store(true)
	// Shutdown begins when ctx ends: readiness fails first, so load
	// balancers stop sending clients while sessions drain.
	stopDrain := context.AfterFunc(ctx, o.Drain)
	defer stopDrain()
	c := srv.Config()
	log.Info("atrium listening", "listen", l.Addr().String(), "upstream", c.Upstream,
		"upstream_sslmode", c.UpstreamSSLMode, "tls", c.TLSCert != "", "max_connections", c.MaxConnections,
		"catalog", cat.describe(), "llm", nlf.llmURL != "", "version", version)
	start := time.Now()
	if err := srv.Serve(ctx, l); err != nil && !errors.Is(err, proxy.ErrServerClosed) {
		return err
	}
	log.Info("sessions ended; stopping", "uptime", time.Since(start).Round(time.Second))
	stopBG()
	wg.Wait()
	closeOps()
	log.Info("atrium stopped")
	return nil
}

// validate checks cross-flag rules.
func (f *serveFlags) validate(nl *nlFlags) error {
	if f.catalogDSN == "" {
		for name, set := range map[string]bool{
			"--catalog-read-dsn": f.catalogReadDSN != "", "--catalog-watch": f.catalogWatch, "--migrate": f.migrate,
		} {
			if set {
				return usageError{name + " needs --catalog-dsn"}
			}
		}
	}
	if f.multihop && nl.llmURL == "" {
		return usageError{"--multihop needs --llm-url"}
	}
	if f.retain >= f.window {
		return usageError{fmt.Sprintf("--atr-retain (%d) must be below --atr-window (%d)", f.retain, f.window)}
	}
	if f.candidates <= 0 {
		return usageError{"--candidates must be positive"}
	}
	return f.abstain.apply(&retriever.Config{})
}

// catalogConn is serve's view of the catalog: a read-write pool (query log,
// watch), a read pool (retrieval, the catalog version), the embedder and
// the retriever. All nil without --catalog-dsn.
type catalogConn struct {
	write, read *pgxpool.Pool
	emb         catalog.Embedder
	ret         *retriever.Retriever
	closeScorer func() error
	dsn         string
}

// openCatalog builds the catalog side from the flags. Pools connect lazily:
// a catalog database that is down at start-up makes RETRIEVE and questions
// fail (and /readyz report it) until it answers, while ordinary SQL is
// proxied all along. --migrate runs first and its failure stops start-up.
func openCatalog(ctx context.Context, sf *serveFlags, nlf *nlFlags, env *cliEnv, log *slog.Logger) (*catalogConn, error) {
	c := &catalogConn{dsn: sf.catalogDSN}
	if sf.catalogDSN == "" {
		return c, nil
	}
	writeCfg, err := pgxpool.ParseConfig(sf.catalogDSN)
	if err != nil {
		return nil, usageError{"--catalog-dsn: " + maskDSN(err.Error())}
	}
	readDSN := sf.catalogReadDSN
	if readDSN == "" {
		readDSN = sf.catalogDSN
	}
	readCfg, err := pgxpool.ParseConfig(readDSN)
	if err != nil {
		return nil, usageError{"--catalog-read-dsn: " + maskDSN(err.Error())}
	}
	if sf.migrate {
		res, err := migrations.UpDSN(ctx, sf.catalogDSN, migrations.Options{Logger: log})
		if err != nil {
			return nil, fmt.Errorf("--migrate: %w", err)
		}
		log.Info("catalog schema migrated", "version", res.Current, "applied", len(res.Applied))
	}
	// Retrieval reads vectors: register pgvector's types on every
	// connection (also on connections made before the extension existed)
	// and size the HNSW search to the candidate lists.
	retriever.ConfigurePool(readCfg, 2*sf.candidates)
	retriever.ConfigureVectorTypes(readCfg)
	if c.read, err = pgxpool.NewWithConfig(ctx, readCfg); err != nil {
		return nil, fmt.Errorf("catalog read pool: %w", err)
	}
	if sf.catalogReadDSN == "" {
		c.write = c.read
	} else if c.write, err = pgxpool.NewWithConfig(ctx, writeCfg); err != nil {
		c.read.Close()
		return nil, fmt.Errorf("catalog pool: %w", err)
	}
	emb, err := resolveEmbedder(ctx, c.read, sf.embed(), log)
	if err != nil {
		c.close()
		return nil, usageError{"--embedder: " + err.Error()}
	}
	c.emb = emb
	// After the embedder: an onnx scorer shares the ONNX Runtime
	// environment an onnx embedder started.
	scorer, closeScorer, err := sf.atr.build(sf.window, log)
	if err != nil {
		c.close()
		return nil, err
	}
	c.closeScorer = closeScorer
	warnScorerEmbedder(log, scorer, emb)
	var rw retriever.Rewriter
	if sf.multihop {
		rw = &retriever.OpenAIRewriter{URL: nlf.llmURL, Model: nlf.llmModel, APIKey: env.getenv("ATRIUM_LLM_API_KEY")}
	}
	rcfg := retriever.Config{
		Candidates: sf.candidates, Window: sf.window, Retain: sf.retain,
		Multihop: retriever.MultihopConfig{Enabled: sf.multihop},
	}
	if err := sf.abstain.apply(&rcfg); err != nil {
		c.close()
		return nil, err
	}
	c.ret, err = retriever.New(c.read, rcfg, retriever.Options{Logger: log, Embedder: emb, Rewriter: rw, Scorer: scorer})
	if err != nil {
		c.close()
		return nil, usageError{err.Error()}
	}
	return c, nil
}

// resolveEmbedder builds the question embedder. Questions must be embedded
// as the catalog was (atrium.catalog_state records the embedder's name and
// dimension): the builtin embedder takes the recorded dimension unless
// --embed-dimension is given, and a mismatch is logged here and reported
// to clients by the retriever (SQLSTATE 55000) until the flags or the
// catalog change.
func resolveEmbedder(ctx context.Context, db *pgxpool.Pool, cfg catalog.EmbedderConfig, log *slog.Logger) (catalog.Embedder, error) {
	cfg.Logger = log
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var name string
	var dim int
	err := db.QueryRow(qctx, "SELECT embedder, dimension FROM atrium.catalog_state").Scan(&name, &dim)
	if err != nil {
		log.Warn("catalog state unreadable at start-up; questions use the configured embedder", "err", err)
	}
	builtin := vocab.ResolveEmbedderKind(cfg.Kind) == "builtin"
	if err == nil && builtin && cfg.Dimension == 0 && name == catalog.NewBuiltinEmbedder(0).Name() && dim > 0 {
		cfg.Dimension = dim
	}
	emb, eerr := vocab.NewEmbedder(cfg)
	if eerr != nil {
		return nil, eerr
	}
	if err == nil && name != "" && (emb.Name() != name || emb.Dimension() != dim) {
		log.Warn("the catalog was embedded with another embedder; RETRIEVE and questions fail until --embedder matches or the catalog is synced again",
			"catalog_embedder", name, "catalog_dimension", dim, "embedder", emb.Name(), "dimension", emb.Dimension())
	}
	return emb, nil
}

// pinger is the catalog check of /readyz; nil (no check) without a catalog.
func (c *catalogConn) pinger() telemetry.Pinger {
	if c.read == nil {
		return nil
	}
	return c.read
}

// writeDB is where the query log goes; nil without a catalog. Like pinger
// it returns the interface, so that "no pool" is a nil interface and not a
// non-nil interface holding a nil *pgxpool.Pool (which once started a query
// log on no database and crashed serve at its first retention purge).
func (c *catalogConn) writeDB() querylog.DB {
	if c.write == nil {
		return nil
	}
	return c.write
}

func (c *catalogConn) describe() string {
	if c.dsn == "" {
		return "none"
	}
	return maskDSN(c.dsn)
}

func (c *catalogConn) close() {
	if c.closeScorer != nil {
		_ = c.closeScorer()
	}
	if cl, ok := c.emb.(io.Closer); ok {
		_ = cl.Close()
	}
	if c.write != nil && c.write != c.read {
		c.write.Close()
	}
	if c.read != nil {
		c.read.Close()
	}
}

// watch runs catalog.Watch on the catalog's own database until ctx ends,
// recording every sync in the catalog metrics.
func (c *catalogConn) watch(ctx context.Context, sf *serveFlags, m *telemetry.CatalogMetrics, log *slog.Logger) {
	opts := catalog.SyncOptions{Embedder: c.emb, Logger: log, AutoMigrate: true}
	if sf.watchSchemas != "" {
		opts.Schemas = strings.Split(sf.watchSchemas, ",")
	}
	if sf.watchExclude != "" {
		opts.Exclude = strings.Split(sf.watchExclude, ",")
	}
	err := catalog.Watch(ctx, c.write, catalog.WatchOptions{
		Sync: opts, Interval: sf.watchInterval,
		OnSync: func(st catalog.SyncStats, err error) {
			m.ObserveSync("watch", st.Duration, st.Rebuilt, err, time.Now())
			if err == nil {
				m.Version.Set(float64(st.Version))
				m.Tables.Set(float64(st.Tables))
			}
		},
	})
	if err != nil && !errors.Is(err, context.Canceled) {
		log.Error("catalog watch stopped", "err", err)
	}
}

// noCatalogHandler answers RETRIEVE and questions when serve runs without a
// catalog, so they fail clearly instead of reaching the server as SQL.
type noCatalogHandler struct{}

func (noCatalogHandler) Intercept(_ context.Context, _ proxy.SessionInfo, sql string) (proxy.Statement, error) {
	if _, ok := question.Parse(sql); !ok {
		return nil, nil
	}
	return nil, &proxy.Error{Code: "55000",
		Message: "RETRIEVE and natural-language questions need the Atrium catalog, and this instance has none",
		Hint:    "Start atrium serve with --catalog-dsn (ATRIUM_CATALOG_DSN) naming the database that holds the catalog (atrium migrate; atrium catalog sync)."}
}
