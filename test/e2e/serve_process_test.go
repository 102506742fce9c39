package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/test/testdb"
)

// logLines parses the JSON log lines a process wrote.
func logLines(out string) []map[string]any {
	var lines []map[string]any
	for _, l := range strings.Split(out, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil {
			lines = append(lines, m)
		}
	}
	return lines
}

func findLog(out, msg string) map[string]any {
	for _, l := range logLines(out) {
		if l["msg"] == msg {
			return l
		}
	}
	return nil
}

// TestServeProcess runs `atrium serve` as operators do: a configuration
// file, environment variables and flags with their precedence, /metrics
// and /readyz on the admin listener, SIGHUP reload and a graceful SIGTERM
// that waits for an open transaction.
func TestServeProcess(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	db := testdb.New(t)
	listen, adminAddr := freeAddr(t), freeAddr(t)
	cfgPath := filepath.Join(t.TempDir(), "atrium.yaml")
	writeCfg := func(level string) {
		require.NoError(t, os.WriteFile(cfgPath, []byte(fmt.Sprintf(`# test configuration
upstream: %s                  # shared key
serve:
  listen: 127.0.0.1:1           # the flag wins
  admin-listen: %s              # only here: the file is read
  upstream-sslmode: disable
  shutdown-timeout: 1s          # the environment wins
  log-level: %s                 # reloaded on SIGHUP
  query-log: false
`, upstreamAddr(t), adminAddr, level)), 0o644))
	}
	writeCfg("info")
	env := []string{"ATRIUM_CONFIG=" + cfgPath, "ATRIUM_SHUTDOWN_TIMEOUT=45s"}
	p := startServe(t, listen, adminAddr, env)

	// Precedence: flag > environment > file > default, as the start-up
	// line reports the effective settings.
	startup := findLog(p.out.String(), "atrium starting")
	require.NotNil(t, startup, p.out.String())
	require.Equal(t, listen, startup["listen"], "flag over file")
	require.Equal(t, "45s", startup["shutdown-timeout"], "environment over file")
	require.Equal(t, adminAddr, startup["admin-listen"], "file over default")
	require.Equal(t, "disable", startup["upstream-sslmode"])
	require.Equal(t, "1000", startup["max-connections"], "default")
	printed := runAtrium(t, env, "config", "print", "serve")
	require.Contains(t, printed, "shutdown-timeout: 45s  # env ATRIUM_SHUTDOWN_TIMEOUT")
	require.Contains(t, printed, "admin-listen: "+adminAddr+"  # file "+cfgPath+":5")

	// Ordinary SQL through the proxy, and questions without a catalog
	// fail clearly (55000) while the session goes on.
	conn, err := pgx.Connect(ctx, p.dsn(t, db))
	require.NoError(t, err)
	defer conn.Close(context.Background())
	var one int
	require.NoError(t, conn.QueryRow(ctx, "SELECT 1").Scan(&one))
	_, err = conn.Exec(ctx, "RETRIEVE customers by country", pgx.QueryExecModeSimpleProtocol)
	var pgErr *pgconn.PgError
	require.True(t, errors.As(err, &pgErr), "%v", err)
	require.Equal(t, "55000", pgErr.Code)
	require.Contains(t, pgErr.Hint, "--catalog-dsn")
	var v string
	require.NoError(t, conn.QueryRow(ctx, "SHOW atrium.version", pgx.QueryExecModeSimpleProtocol).Scan(&v))
	require.NotEmpty(t, v)

	// Health and metrics.
	code, body := p.get("/healthz")
	require.Equal(t, http.StatusOK, code, body)
	code, body = p.get("/readyz")
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, "upstream: ok")
	code, body = p.get("/metrics")
	require.Equal(t, http.StatusOK, code)
	for _, want := range []string{"atrium_build_info{", "atrium_sessions_active 1", "go_goroutines", "atrium_upstream_connect_seconds_count 1"} {
		require.Contains(t, body, want)
	}
	require.Equal(t, 1.0, p.metric(t, `atrium_intercept_errors_total{kind="other",sqlstate_class="55"}`))
	require.Equal(t, 1.0, p.metric(t, `atrium_queries_intercepted_total{kind="version"}`))
	// Traffic of a session still open is counted at scrape time.
	require.Greater(t, p.metric(t, `atrium_relayed_messages_total{direction="client_to_server"}`), 0.0)
	require.Greater(t, p.metric(t, `atrium_relayed_bytes_total{direction="server_to_client"}`), 0.0)

	// SIGHUP re-reads the file: the log level becomes debug.
	writeCfg("debug")
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGHUP))
	require.Eventually(t, func() bool {
		l := findLog(p.out.String(), "configuration reloaded")
		return l != nil && l["log-level"] == "debug"
	}, 30*time.Second, 50*time.Millisecond, p.out.String())
	c2, err := pgx.Connect(ctx, p.dsn(t, db))
	require.NoError(t, err)
	require.NoError(t, c2.Close(ctx))
	require.Eventually(t, func() bool { return findLog(p.out.String(), "session started") != nil }, 10*time.Second, 20*time.Millisecond,
		"debug lines appear after the reload")

	// An invalid value on reload changes nothing.
	require.NoError(t, os.WriteFile(cfgPath, []byte("serve:\n  log-level: loud\n"), 0o644))
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGHUP))
	require.Eventually(t, func() bool {
		return findLog(p.out.String(), "configuration reload failed; keeping the current settings") != nil
	},
		30*time.Second, 50*time.Millisecond)

	// SIGTERM: /readyz fails at once, the open transaction may finish,
	// then the session is closed and the process exits 0.
	tx, err := conn.Begin(ctx)
	require.NoError(t, err)
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	require.Eventually(t, func() bool {
		code, _ := p.get("/readyz")
		return code == http.StatusServiceUnavailable
	}, 10*time.Second, 20*time.Millisecond)
	select {
	case <-p.exited:
		t.Fatal("atrium exited with a transaction still open")
	default:
	}
	require.NoError(t, conn.QueryRow(ctx, "SELECT 2").Scan(&one))
	require.NoError(t, tx.Commit(ctx))
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		t.Fatal("atrium did not exit after the last transaction ended")
	}
	require.NoError(t, p.err, "exit status")
	require.NotNil(t, findLog(p.out.String(), "atrium stopped"))
}
