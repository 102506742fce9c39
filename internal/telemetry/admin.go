package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// DefaultAdminListen is the admin listener's default address. Loopback by
// default: metrics and health are for the host's agents unless an operator
// opens them up (containers set 0.0.0.0:9187).
const DefaultAdminListen = "127.0.0.1:9187"

// RegisterProcess registers the Go runtime and process collectors and an
// atrium_build_info gauge (always 1, labelled with the version) on reg.
func RegisterProcess(reg prometheus.Registerer, version string) {
	info := prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace:   namespace,
		Name:        "build_info",
		Help:        "Always 1; labelled with the running version.",
		ConstLabels: prometheus.Labels{"version": version},
	})
	info.Set(1)
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		info,
	)
}

// Check is one readiness condition: Atrium is ready when every check passes.
type Check struct {
	// Name identifies the check in /readyz output ("upstream", "catalog").
	Name string
	// Func returns nil when the condition holds. It must honour ctx: /readyz
	// gives each check CheckTimeout.
	Func func(ctx context.Context) error
}

// Pinger is anything that can prove a connection works (*pgxpool.Pool,
// *pgx.Conn, a Redis client wrapper).
type Pinger interface {
	Ping(ctx context.Context) error
}

// PingCheck is a Check that pings p.
func PingCheck(name string, p Pinger) Check {
	return Check{Name: name, Func: p.Ping}
}

// DialCheck is a Check that opens (and closes) a TCP connection to addr:
// the upstream server is reachable. It does not authenticate: Atrium has no
// credentials of its own for the upstream.
func DialCheck(name, addr string) Check {
	return Check{Name: name, Func: func(ctx context.Context) error {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return err
		}
		return c.Close()
	}}
}

// AdminConfig configures the admin HTTP server.
type AdminConfig struct {
	// Listen is the address to listen on (default DefaultAdminListen).
	Listen string
	// CheckTimeout bounds each readiness check (default 2s).
	CheckTimeout time.Duration
	// Pprof serves Go's profiler under /debug/pprof/. Off by default: a
	// profile reveals internals and costs CPU while it runs, so it is for
	// an operator who asks for it (and the proxy benchmark).
	Pprof bool
}

// AdminOptions are the admin server's dependencies.
type AdminOptions struct {
	// Gatherer serves /metrics (nil: prometheus.DefaultGatherer).
	Gatherer prometheus.Gatherer
	// Checks decide /readyz.
	Checks []Check
	// Logger receives the server's errors (nil: discard).
	Logger *slog.Logger
}

// AdminServer serves /metrics, /healthz and /readyz. /healthz answers 200
// while the process runs (liveness: restart me only if this fails);
// /readyz answers 200 only when every check passes and the server is not
// draining (readiness: send me clients). Safe for concurrent use.
type AdminServer struct {
	cfg      AdminConfig
	opts     AdminOptions
	log      *slog.Logger
	draining atomic.Bool
	srv      *http.Server

	mu struct {
		sync.Mutex
		ln net.Listener
	}
}

// NewAdminServer builds an admin server; Serve or ListenAndServe runs it.
func NewAdminServer(cfg AdminConfig, opts AdminOptions) *AdminServer {
	if cfg.Listen == "" {
		cfg.Listen = DefaultAdminListen
	}
	if cfg.CheckTimeout <= 0 {
		cfg.CheckTimeout = 2 * time.Second
	}
	if opts.Gatherer == nil {
		opts.Gatherer = prometheus.DefaultGatherer
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &AdminServer{cfg: cfg, opts: opts, log: log}
	s.srv = &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 5 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	return s
}

// Handler returns the admin endpoints as an http.Handler.
func (s *AdminServer) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.opts.Gatherer, promhttp.HandlerOpts{
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		EnableOpenMetrics: true,
	}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", s.readyz)
	index := "Atrium admin: /metrics /healthz /readyz"
	if s.cfg.Pprof {
		// pprof.Index serves the named profiles (heap, allocs, goroutine,
		// ...) below its prefix; the other four are handlers of their own.
		mux.HandleFunc("GET /debug/pprof/", pprof.Index)
		mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
		index += " /debug/pprof/"
	}
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, index)
	})
	return mux
}

// SetDraining marks the server as shutting down: /readyz fails from now
// on, so load balancers stop sending new clients while sessions finish.
func (s *AdminServer) SetDraining() { s.draining.Store(true) }

// checkResult is one check's outcome.
type checkResult struct {
	name string
	err  error
}

// Ready runs every check concurrently, each bounded by CheckTimeout, and
// returns the failures keyed by check name (empty: ready).
func (s *AdminServer) Ready(ctx context.Context) map[string]error {
	results := make(chan checkResult, len(s.opts.Checks))
	for _, c := range s.opts.Checks {
		go func() {
			cctx, cancel := context.WithTimeout(ctx, s.cfg.CheckTimeout)
			defer cancel()
			results <- checkResult{c.Name, c.Func(cctx)}
		}()
	}
	failed := map[string]error{}
	for range s.opts.Checks {
		r := <-results
		if r.err != nil {
			failed[r.name] = r.err
		}
	}
	return failed
}

func (s *AdminServer) readyz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if s.draining.Load() {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, "draining: shutting down")
		return
	}
	failed := s.Ready(r.Context())
	if len(failed) > 0 {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	names := make([]string, 0, len(s.opts.Checks))
	for _, c := range s.opts.Checks {
		names = append(names, c.Name)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		if err, bad := failed[n]; bad {
			// The reason goes to the log in full; the response names only
			// the failing check, as it may be reachable by others.
			s.log.Warn("readiness check failed", "check", n, "err", err)
			fmt.Fprintf(&b, "%s: failed\n", n)
		} else {
			fmt.Fprintf(&b, "%s: ok\n", n)
		}
	}
	if len(failed) == 0 {
		b.WriteString("ready\n")
	}
	fmt.Fprint(w, b.String())
}

// Listen binds the configured address; Addr then reports it (useful with
// port 0). Serve uses the listener.
func (s *AdminServer) Listen() error {
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return fmt.Errorf("admin listener on %s: %w", s.cfg.Listen, err)
	}
	s.mu.Lock()
	s.mu.ln = ln
	s.mu.Unlock()
	return nil
}

// Addr is the bound address, or "" before Listen.
func (s *AdminServer) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.ln == nil {
		return ""
	}
	return s.mu.ln.Addr().String()
}

// Serve serves until ctx ends, then shuts down, giving in-flight requests
// up to five seconds. It calls Listen first if it has not been called.
func (s *AdminServer) Serve(ctx context.Context) error {
	s.mu.Lock()
	ln := s.mu.ln
	s.mu.Unlock()
	if ln == nil {
		if err := s.Listen(); err != nil {
			return err
		}
		s.mu.Lock()
		ln = s.mu.ln
		s.mu.Unlock()
	}
	errc := make(chan error, 1)
	go func() { errc <- s.srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("admin server: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(sctx); err != nil {
		_ = s.srv.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("admin server: %w", err)
	}
	return nil
}
