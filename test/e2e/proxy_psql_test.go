package e2e

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/atriumdb/atrium/test/testdb"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

func TestProxyPsql(t *testing.T) {
	db := testdb.New(t)
	p := startProxy(t, proxyOpts{})
	conninfo := p.dsn(t, db)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	run := func(t *testing.T, args ...string) string {
		t.Helper()
		out, err := psqlCmd(ctx, conninfo, args...).CombinedOutput()
		require.NoError(t, err, "psql %v: %s", args, out)
		return string(out)
	}

	t.Run("queries and describe", func(t *testing.T) {
		run(t, "-c", "CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL)")
		out := run(t, "-At", "-c", "INSERT INTO items SELECT g, 'item ' || g FROM generate_series(1, 100) g", "-c", "SELECT count(*), max(name) FROM items")
		require.Contains(t, out, "100|item 99")
		out = run(t, "-c", `\d items`)
		require.Contains(t, out, `Table "public.items"`)
		require.Contains(t, out, "items_pkey")
	})

	t.Run("show atrium.version", func(t *testing.T) {
		out := run(t, "-c", "SHOW atrium.version")
		require.Contains(t, out, "atrium_version")
		require.Contains(t, out, "test-version")
		require.Contains(t, out, "(1 row)")
	})

	t.Run("copy in and out", func(t *testing.T) {
		dir := t.TempDir()
		in := filepath.Join(dir, "in.csv")
		var b bytes.Buffer
		for i := 1000; i < 3000; i++ {
			b.WriteString(strings.Repeat("x", i%7) + "," + "line\n")
		}
		require.NoError(t, os.WriteFile(in, b.Bytes(), 0o644))
		run(t, "-c", "CREATE TABLE lines (a text, b text)")
		out := run(t, "-c", `\copy lines FROM '`+in+`' WITH (FORMAT csv)`)
		require.Contains(t, out, "COPY 2000")
		outFile := filepath.Join(dir, "out.csv")
		out = run(t, "-c", `\copy (SELECT a, b FROM lines) TO '`+outFile+`' WITH (FORMAT csv)`)
		require.Contains(t, out, "COPY 2000")
		got, err := os.ReadFile(outFile)
		require.NoError(t, err)
		require.Equal(t, b.String(), string(got))
	})

	t.Run("function calls (large objects)", func(t *testing.T) {
		// libpq moves large objects with the FunctionCall message.
		dir := t.TempDir()
		in, out := filepath.Join(dir, "in.bin"), filepath.Join(dir, "out.bin")
		data := bytes.Repeat([]byte{0, 1, 2, 254, 255}, 50000)
		require.NoError(t, os.WriteFile(in, data, 0o644))
		cmd := psqlCmd(ctx, conninfo, "-v", "ON_ERROR_STOP=1")
		cmd.Stdin = strings.NewReader("BEGIN;\n\\lo_import '" + in + "'\n\\lo_export :LASTOID '" + out + "'\n\\lo_unlink :LASTOID\nCOMMIT;\n")
		o, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", o)
		got, err := os.ReadFile(out)
		require.NoError(t, err)
		require.True(t, bytes.Equal(data, got))
	})

	t.Run("error then the session continues", func(t *testing.T) {
		out, _ := psqlCmd(ctx, conninfo, "-At", "-c", "SELECT 1/0", "-c", "SELECT 'still here'", "-c", "SHOW atrium.version").CombinedOutput()
		require.Contains(t, string(out), "division by zero")
		require.Contains(t, string(out), "still here")
		require.Contains(t, string(out), "test-version")
	})

	t.Run("transaction with interception", func(t *testing.T) {
		cmd := psqlCmd(ctx, conninfo, "-At", "-v", "ON_ERROR_STOP=1")
		cmd.Stdin = strings.NewReader("CREATE TABLE tx (v int);\nBEGIN;\nINSERT INTO tx VALUES (1);\nSHOW atrium.version;\nSELECT count(*) FROM tx;\nCOMMIT;\nSELECT sum(v) FROM tx;\n")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Equal(t, "CREATE TABLE\nBEGIN\nINSERT 0 1\ntest-version\n1\nCOMMIT\n1\n", string(out))
	})

	t.Run("cancel pg_sleep with SIGINT", func(t *testing.T) {
		cmd := psqlCmd(ctx, conninfo, "-c", "SELECT pg_sleep(30)")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		require.NoError(t, cmd.Start())
		admin, err := pgx.Connect(ctx, db)
		require.NoError(t, err)
		defer admin.Close(ctx)
		require.Eventually(t, func() bool {
			var n int
			_ = admin.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(30)' AND state = 'active'").Scan(&n)
			return n == 1
		}, 20*time.Second, 50*time.Millisecond)
		require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
		_ = cmd.Wait()
		require.Contains(t, out.String(), "canceling statement due to user request")
		// The server stopped the query, not just psql its wait.
		var n int
		require.NoError(t, admin.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(30)' AND state = 'active'").Scan(&n))
		require.Zero(t, n)
	})
}
