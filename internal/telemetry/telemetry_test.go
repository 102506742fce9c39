package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestMetricNames(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	m.Proxy.SessionsActive.Inc()
	m.Proxy.SessionsTotal.Inc()
	m.Proxy.SessionsEnded.WithLabelValues("normal").Inc()
	m.Proxy.Intercepted.WithLabelValues("nl").Inc()
	m.Retrieval.ObserveRetrieval(map[string]time.Duration{StageCandidates: time.Millisecond, StageTotal: 3 * time.Millisecond}, 3, nil)
	m.Retrieval.ObserveRetrieval(nil, 0, nil)
	m.Retrieval.ObserveRetrieval(nil, 0, errors.New("catalog not built"))
	m.LLM.ObserveCall("generate", time.Second, "")
	m.LLM.ObserveCall("generate", time.Second, "http_429")
	m.Catalog.Version.Set(7)
	m.Catalog.ObserveSync("manual", 2*time.Second, 12, nil, time.Unix(1700000000, 0))
	m.QueryLog.Dropped.WithLabelValues(DropQueueFull).Inc()

	fams, err := reg.Gather()
	require.NoError(t, err)
	names := map[string]bool{}
	for _, f := range fams {
		names[f.GetName()] = true
		// Conventions: counters end in _total, histograms of time in _seconds.
		switch f.GetType().String() {
		case "COUNTER":
			require.True(t, strings.HasSuffix(f.GetName(), "_total"), f.GetName())
		case "HISTOGRAM":
			if f.GetName() != "atrium_retrieval_tables_chosen" {
				require.True(t, strings.HasSuffix(f.GetName(), "_seconds"), f.GetName())
			}
		}
	}
	for _, want := range []string{
		"atrium_sessions_active", "atrium_sessions_total", "atrium_relayed_bytes_total",
		"atrium_relayed_messages_total", "atrium_queries_intercepted_total",
		"atrium_retrieval_stage_seconds", "atrium_retrieval_tables_chosen", "atrium_retrievals_total",
		"atrium_llm_calls_total", "atrium_llm_errors_total",
		"atrium_catalog_version", "atrium_catalog_sync_seconds", "atrium_query_log_dropped_total",
	} {
		require.True(t, names[want], "missing metric %s", want)
	}
	require.Equal(t, 1.0, testutil.ToFloat64(m.LLM.Errors.WithLabelValues("http_429")))
	require.Equal(t, 1.0, testutil.ToFloat64(m.LLM.Calls.WithLabelValues("generate", "ok")))
	require.Equal(t, 1.0, testutil.ToFloat64(m.Retrieval.Retrievals.WithLabelValues("empty")))
	require.Equal(t, 1.0, testutil.ToFloat64(m.Retrieval.Retrievals.WithLabelValues("error")))
	require.Equal(t, 1700000000.0, testutil.ToFloat64(m.Catalog.LastSync))

	// Components built without a registerer get private, working metrics.
	NewMetrics(nil).Proxy.SessionsActive.Inc()
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

func TestAdminServer(t *testing.T) {
	reg := prometheus.NewRegistry()
	RegisterProcess(reg, "1.2.3-test")
	m := NewMetrics(reg)
	m.Proxy.SessionsActive.Set(3)

	// A closed port: bind then release it.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := l.Addr().String()
	require.NoError(t, l.Close())

	var upstreamUp atomic.Bool
	upstreamUp.Store(true)
	checks := []Check{
		DialCheck("postgres", "127.0.0.1:5432"),
		{Name: "upstream", Func: func(ctx context.Context) error {
			if upstreamUp.Load() {
				return nil
			}
			return DialCheck("upstream", closed).Func(ctx)
		}},
	}
	var logs bytes.Buffer
	s := NewAdminServer(AdminConfig{Listen: "127.0.0.1:0"}, AdminOptions{
		Gatherer: reg, Checks: checks, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	})
	require.NoError(t, s.Listen())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	base := "http://" + s.Addr()

	code, body := get(t, base+"/healthz")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "ok\n", body)

	code, body = get(t, base+"/readyz")
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, "postgres: ok")
	require.Contains(t, body, "ready")

	upstreamUp.Store(false)
	code, body = get(t, base+"/readyz")
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Contains(t, body, "upstream: failed")
	require.Contains(t, logs.String(), "readiness check failed")
	upstreamUp.Store(true)

	code, body = get(t, base+"/metrics")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "atrium_sessions_active 3")
	require.Contains(t, body, `atrium_build_info{version="1.2.3-test"} 1`)
	require.Contains(t, body, "go_goroutines")

	code, _ = get(t, base+"/debug/pprof/")
	require.Equal(t, http.StatusNotFound, code, "the profiler is off unless asked for")

	s.SetDraining()
	code, _ = get(t, base+"/readyz")
	require.Equal(t, http.StatusServiceUnavailable, code)
	code, _ = get(t, base+"/healthz")
	require.Equal(t, http.StatusOK, code, "draining is not dead")

	cancel()
	require.NoError(t, <-done)
	http.DefaultClient.CloseIdleConnections()
}

// TestAdminPprof: with Pprof on, the admin listener serves Go's profiler
// (named profiles and a short CPU profile).
func TestAdminPprof(t *testing.T) {
	s := NewAdminServer(AdminConfig{Listen: "127.0.0.1:0", Pprof: true}, AdminOptions{Gatherer: prometheus.NewRegistry()})
	require.NoError(t, s.Listen())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	base := "http://" + s.Addr()

	code, body := get(t, base+"/debug/pprof/")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "allocs")
	code, _ = get(t, base+"/debug/pprof/allocs")
	require.Equal(t, http.StatusOK, code)
	code, _ = get(t, base+"/debug/pprof/profile?seconds=1")
	require.Equal(t, http.StatusOK, code)
	code, body = get(t, base+"/")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "/debug/pprof/")

	cancel()
	require.NoError(t, <-done)
	http.DefaultClient.CloseIdleConnections()
}

func TestAdminListenError(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	s := NewAdminServer(AdminConfig{Listen: l.Addr().String()}, AdminOptions{Gatherer: prometheus.NewRegistry()})
	require.ErrorContains(t, s.Serve(context.Background()), l.Addr().String())
}

func TestReadyTimeout(t *testing.T) {
	s := NewAdminServer(AdminConfig{CheckTimeout: 10 * time.Millisecond}, AdminOptions{
		Gatherer: prometheus.NewRegistry(),
		Checks: []Check{{Name: "stuck", Func: func(ctx context.Context) error {
			<-ctx.Done()
			return ctx.Err()
		}}},
	})
	failed := s.Ready(context.Background())
	require.ErrorIs(t, failed["stuck"], context.DeadlineExceeded)
}

func TestLogger(t *testing.T) {
	var buf bytes.Buffer
	log, err := NewLogger(&buf, "auto", "info")
	require.NoError(t, err)
	ctx := WithRequestID(context.Background(), "abc123")
	log.With("conn", 7).InfoContext(ctx, "question answered", "tables", 3)
	log.Debug("hidden")
	// Not a terminal: JSON, with the request id from the context.
	var rec map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &rec))
	require.Equal(t, "abc123", rec[RequestIDKey])
	require.Equal(t, float64(7), rec["conn"])
	require.Equal(t, "question answered", rec["msg"])

	buf.Reset()
	log, err = NewLogger(&buf, "text", "debug")
	require.NoError(t, err)
	log.DebugContext(ctx, "shown")
	require.Contains(t, buf.String(), "request_id=abc123")

	_, err = NewLogger(&buf, "xml", "info")
	require.Error(t, err)
	_, err = NewLogger(&buf, "json", "loud")
	require.Error(t, err)
}

func TestRequestID(t *testing.T) {
	require.Empty(t, RequestID(context.Background()))
	ctx, id := EnsureRequestID(context.Background())
	require.Len(t, id, 16)
	require.Equal(t, id, RequestID(ctx))
	ctx2, id2 := EnsureRequestID(ctx)
	require.Equal(t, id, id2, "an existing id is kept")
	require.Equal(t, ctx, ctx2)
	require.NotEqual(t, id, NewRequestID())
	require.Equal(t, slog.String("request_id", "x"), RequestIDAttr("x"))
}

// errPinger is a Pinger that fails, for PingCheck.
type errPinger struct{ err error }

func (p errPinger) Ping(context.Context) error { return p.err }

func TestPingCheck(t *testing.T) {
	boom := errors.New("boom")
	require.ErrorIs(t, PingCheck("catalog", errPinger{boom}).Func(context.Background()), boom)
	require.NoError(t, PingCheck("catalog", errPinger{}).Func(context.Background()))
}
