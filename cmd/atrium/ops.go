package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/atriumdb/atrium/internal/querylog"
	"github.com/atriumdb/atrium/internal/telemetry"
)

// opsFlags are serve's operations settings: the admin listener and the
// query log.
type opsFlags struct {
	adminListen       string
	adminPprof        bool
	queryLog          bool
	queryLogRetention time.Duration
	queryLogQueue     int
	instance          string
}

// addOpsFlags declares the operations flags on serve's FlagSet.
func addOpsFlags(fs *flag.FlagSet) *opsFlags {
	o := &opsFlags{}
	fs.StringVar(&o.adminListen, "admin-listen", telemetry.DefaultAdminListen,
		"`address` of the admin HTTP server: /metrics, /healthz, /readyz (empty: no admin server)")
	fs.BoolVar(&o.adminPprof, "admin-pprof", false,
		"also serve Go's profiler under /debug/pprof/ on the admin listener (for profiling; off in production)")
	fs.BoolVar(&o.queryLog, "query-log", true,
		"record every question and RETRIEVE in atrium.query_log in the catalog database")
	fs.DurationVar(&o.queryLogRetention, "query-log-retention", 30*24*time.Hour,
		"delete atrium.query_log rows older than this (0: keep forever; reloaded on SIGHUP)")
	fs.IntVar(&o.queryLogQueue, "query-log-queue", 10000,
		"query-log entries held while the catalog database is slow; beyond that they are dropped and counted")
	fs.StringVar(&o.instance, "instance", "",
		"name of this instance in the query log and metrics (default: the host name)")
	return o
}

// opsDeps are what the operations layer needs from serve.
type opsDeps struct {
	// Logger is the process logger.
	Logger *slog.Logger
	// Listening reports whether the proxy's client listener is bound:
	// /readyz fails until it is, since the admin server starts first and a
	// client sent by a "ready" answer would otherwise be refused. nil: no
	// such check.
	Listening func() bool
	// Upstream is the upstream address /readyz dials.
	Upstream string
	// Catalog is pinged by /readyz (a *pgxpool.Pool); nil: no check.
	Catalog telemetry.Pinger
	// QueryLogDB is the catalog database pool the query log writes to; nil
	// disables the query log.
	QueryLogDB querylog.DB
}

// ops is the running operations layer of `atrium serve`.
type ops struct {
	// Registry holds every metric; Metrics are the components' parts.
	Registry *prometheus.Registry
	Metrics  *telemetry.Metrics
	// Admin is nil when --admin-listen is empty.
	Admin *telemetry.AdminServer
	// QueryLog is nil when the query log is off or has no database.
	QueryLog *querylog.Writer

	log       *slog.Logger
	stopAdmin context.CancelFunc
	adminDone chan error
}

// startOps builds the metrics registry, binds the admin listener (a busy
// port fails start-up, not later) and serves it, and starts the query-log
// writer. Callers must call Close.
func startOps(ctx context.Context, f *opsFlags, deps opsDeps) (*ops, error) {
	log := deps.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	reg := prometheus.NewRegistry()
	telemetry.RegisterProcess(reg, version)
	o := &ops{Registry: reg, Metrics: telemetry.NewMetrics(reg), log: log}

	if f.queryLog && deps.QueryLogDB != nil {
		instance := f.instance
		if instance == "" {
			instance, _ = os.Hostname()
		}
		o.QueryLog = querylog.New(deps.QueryLogDB, querylog.Config{
			QueueSize: f.queryLogQueue,
			Retention: f.queryLogRetention,
			Instance:  instance,
		}, querylog.Options{Logger: log, Metrics: o.Metrics.QueryLog})
	}

	if f.adminListen != "" {
		var checks []telemetry.Check
		if deps.Listening != nil {
			checks = append(checks, telemetry.Check{Name: "listener", Func: func(context.Context) error {
				if !deps.Listening() {
					return errors.New("the proxy is not accepting client connections yet")
				}
				return nil
			}})
		}
		if deps.Upstream != "" {
			checks = append(checks, telemetry.DialCheck("upstream", deps.Upstream))
		}
		if deps.Catalog != nil {
			checks = append(checks, telemetry.PingCheck("catalog", deps.Catalog))
		}
		o.Admin = telemetry.NewAdminServer(telemetry.AdminConfig{Listen: f.adminListen, Pprof: f.adminPprof},
			telemetry.AdminOptions{Gatherer: reg, Checks: checks, Logger: log})
		if err := o.Admin.Listen(); err != nil {
			if o.QueryLog != nil {
				_ = o.QueryLog.Close(ctx)
			}
			return nil, err
		}
		actx, cancel := context.WithCancel(context.Background())
		o.stopAdmin = cancel
		o.adminDone = make(chan error, 1)
		go func() { o.adminDone <- o.Admin.Serve(actx) }()
		log.Info("admin server listening", "admin_listen", o.Admin.Addr())
	}
	return o, nil
}

// LogQuestion queues a query-log entry; it never blocks. No-op without a
// query log.
func (o *ops) LogQuestion(e querylog.Entry) {
	if o.QueryLog != nil {
		o.QueryLog.Log(e)
	}
}

// Drain makes /readyz fail so load balancers stop sending new clients;
// call it when shutdown begins, before waiting for sessions.
func (o *ops) Drain() {
	if o.Admin != nil {
		o.Admin.SetDraining()
	}
}

// Close flushes the query log and stops the admin server. Call it after
// the proxy has stopped, so the last questions are logged and /metrics
// stays scrapeable while sessions drain.
func (o *ops) Close(ctx context.Context) error {
	var errs []error
	if o.QueryLog != nil {
		if err := o.QueryLog.Close(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if o.stopAdmin != nil {
		o.stopAdmin()
		if err := <-o.adminDone; err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// reloadable is one setting that SIGHUP may change.
type reloadable struct {
	// Check vets a new value before anything changes; nil accepts any
	// value the flag parses.
	Check func(v any) error
	// Apply installs a new value. It runs on the reload goroutine.
	Apply func(v any)
}

// opsReloadables are the ops layer's reloadable settings: the logger's level
// and the query log's retention. serve adds its own (cache TTLs...) to the
// map it passes to startReload.
func (o *ops) opsReloadables(level *slog.LevelVar) map[string]reloadable {
	return map[string]reloadable{
		"log-level": {
			Check: func(v any) error {
				_, err := telemetry.ParseLevel(fmt.Sprint(v))
				return err
			},
			Apply: func(v any) {
				lvl, _ := telemetry.ParseLevel(fmt.Sprint(v)) // vetted by Check
				level.Set(lvl)
			},
		},
		"query-log-retention": {
			Apply: func(v any) {
				if d, ok := v.(time.Duration); ok && o.QueryLog != nil {
					o.QueryLog.SetRetention(d)
				}
			},
		},
	}
}

// startReload re-reads the given settings on every SIGHUP until ctx ends
// and applies each changed value. Keys whose flag was given on the command
// line keep that value; a reload with any invalid value changes nothing.
// It returns once the signal handler is installed.
func startReload(ctx context.Context, st *settings, log *slog.Logger, keys map[string]reloadable) error {
	r, err := st.reloader(sortedKeys(keys)...)
	if err != nil {
		return err
	}
	for k, rk := range keys {
		if rk.Check != nil {
			r.Check(k, rk.Check)
		}
	}
	r.Subscribe(func(changed map[string]any) {
		for _, k := range sortedKeys(changed) {
			keys[k].Apply(changed[k])
		}
	})
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		defer signal.Stop(hup)
		r.runOn(ctx, hup, log)
	}()
	return nil
}
