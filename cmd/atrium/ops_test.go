package main

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/internal/querylog"
	"github.com/atriumdb/atrium/migrations"
	"github.com/atriumdb/atrium/test/testdb"
)

func TestOpsEndToEnd(t *testing.T) {
	ctx := context.Background()
	dsn := testdb.New(t, "vector", "pg_trgm")
	_, err := migrations.UpDSN(ctx, dsn, migrations.Options{})
	require.NoError(t, err)
	pool, err := pgxpool.New(ctx, dsn)
	require.NoError(t, err)
	defer pool.Close()

	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := addOpsFlags(fs)
	require.NoError(t, fs.Parse([]string{"--admin-listen", "127.0.0.1:0", "--instance", "test-0"}))

	var listening atomic.Bool
	o, err := startOps(ctx, f, opsDeps{Listening: listening.Load, Upstream: "127.0.0.1:5432", Catalog: pool, QueryLogDB: pool})
	require.NoError(t, err)
	base := "http://" + o.Admin.Addr()
	readyz := func() (int, string) {
		resp, err := http.Get(base + "/readyz")
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}

	// The admin server starts before the proxy binds its port: not ready
	// until it has, or a client sent now would be refused.
	code, text := readyz()
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Contains(t, text, "listener: failed")
	listening.Store(true)
	code, text = readyz()
	require.Equal(t, http.StatusOK, code, text)
	require.Contains(t, text, "listener: ok")

	o.Metrics.Proxy.SessionsActive.Inc()
	o.LogQuestion(querylog.Entry{RequestID: "ops-1", Database: "app", Role: "r", Kind: querylog.KindNL,
		Question: "q", Status: querylog.StatusOK})

	body := func() string {
		resp, err := http.Get(base + "/metrics")
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return string(b)
	}()
	require.Contains(t, body, "atrium_sessions_active 1")
	require.Contains(t, body, "atrium_build_info")

	o.Drain()
	code, _ = readyz()
	require.Equal(t, http.StatusServiceUnavailable, code)

	require.NoError(t, o.Close(ctx))
	http.DefaultClient.CloseIdleConnections()
	var instance string
	require.NoError(t, pool.QueryRow(ctx, "SELECT instance FROM atrium.query_log WHERE request_id = 'ops-1'").Scan(&instance))
	require.Equal(t, "test-0", instance)
}

func TestOpsAdminPortBusy(t *testing.T) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	f := addOpsFlags(fs)
	require.NoError(t, fs.Parse([]string{"--admin-listen", "127.0.0.1:0"}))
	first, err := startOps(context.Background(), f, opsDeps{})
	require.NoError(t, err)
	defer first.Close(context.Background())
	f.adminListen = first.Admin.Addr()
	_, err = startOps(context.Background(), f, opsDeps{})
	require.ErrorContains(t, err, first.Admin.Addr())
}

func TestStartReloadAppliesLogLevel(t *testing.T) {
	file := filepath.Join(t.TempDir(), "atrium.yaml")
	require.NoError(t, os.WriteFile(file, []byte("serve:\n  log-level: info\n"), 0o600))
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.String("log-level", "info", "log level")
	f := addOpsFlags(fs)
	f.adminListen = ""
	st, err := parseFlags(context.Background(), envFrom(nil), fs, []string{"--config", file, "--admin-listen", ""})
	require.NoError(t, err)
	o, err := startOps(context.Background(), f, opsDeps{})
	require.NoError(t, err)
	defer o.Close(context.Background())

	var level slog.LevelVar
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	require.NoError(t, startReload(ctx, st, slog.New(slog.DiscardHandler), o.opsReloadables(&level)))

	require.NoError(t, os.WriteFile(file, []byte("serve:\n  log-level: debug\n"), 0o600))
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGHUP))
	require.Eventually(t, func() bool { return level.Level() == slog.LevelDebug }, time.Minute, 10*time.Millisecond)
}

func TestReloadCheckRejectsWithoutApplying(t *testing.T) {
	file := filepath.Join(t.TempDir(), "atrium.yaml")
	require.NoError(t, os.WriteFile(file, []byte("serve:\n  log-level: info\n"), 0o600))
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.String("log-level", "info", "log level")
	f := addOpsFlags(fs)
	st, err := parseFlags(context.Background(), envFrom(nil), fs, []string{"--config", file, "--admin-listen", ""})
	require.NoError(t, err)
	o, err := startOps(context.Background(), f, opsDeps{})
	require.NoError(t, err)
	defer o.Close(context.Background())

	var level slog.LevelVar
	keys := o.opsReloadables(&level)
	r, err := st.reloader(sortedKeys(keys)...)
	require.NoError(t, err)
	r.Check("log-level", keys["log-level"].Check)
	require.NoError(t, os.WriteFile(file, []byte("serve:\n  log-level: loud\n  query-log-retention: 1h\n"), 0o600))
	_, err = r.Reload()
	require.ErrorContains(t, err, `"log-level"`)
	// Nothing was committed: fixing the level reports both keys as changed.
	require.NoError(t, os.WriteFile(file, []byte("serve:\n  log-level: warn\n  query-log-retention: 1h\n"), 0o600))
	changed, err := r.Reload()
	require.NoError(t, err)
	require.Equal(t, map[string]any{"log-level": "warn", "query-log-retention": time.Hour}, changed)
}
