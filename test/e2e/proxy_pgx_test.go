package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/atriumdb/atrium/proxy"
	"github.com/atriumdb/atrium/test/testdb"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// streamHandler is a test Handler: "ATRIUM STREAM <select>" runs the select
// on the client's own upstream connection through Upstream.Query (to
// describe) and Upstream.Stream (to execute).
var streamHandler = proxy.HandlerFunc(func(_ context.Context, _ proxy.SessionInfo, sql string) (proxy.Statement, error) {
	const prefix = "ATRIUM STREAM "
	if !strings.HasPrefix(sql, prefix) {
		return nil, nil
	}
	return &streamStmt{sql: strings.TrimPrefix(sql, prefix)}, nil
})

type streamStmt struct{ sql string }

func (s *streamStmt) Kind() string { return "stream" }

func (s *streamStmt) Describe(ctx context.Context, up proxy.Upstream) ([]pgproto3.FieldDescription, error) {
	res, err := up.Query(ctx, "SELECT * FROM ("+s.sql+") q LIMIT 0")
	if err != nil {
		return nil, err
	}
	return res.Fields, nil
}

func (s *streamStmt) Execute(ctx context.Context, up proxy.Upstream, w proxy.RowWriter) (string, error) {
	tag, _, err := up.Stream(ctx, s.sql, 0, w)
	return tag, err
}

func TestProxyPgx(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) }) // runs after the proxy's shutdown
	db := testdb.New(t)
	p := startProxy(t, proxyOpts{handler: proxy.Handlers{proxy.VersionHandler("test-version"), streamHandler}})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	connect := func(t *testing.T, extra ...string) *pgx.Conn {
		t.Helper()
		c, err := pgx.Connect(ctx, p.dsn(t, db, extra...))
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close(context.Background()) })
		return c
	}
	setup := connect(t)
	_, err := setup.Exec(ctx, "CREATE TABLE kv (k int PRIMARY KEY, v text); CREATE TABLE blobs (id int, b bytea)")
	require.NoError(t, err)

	t.Run("prepared statements in every exec mode", func(t *testing.T) {
		for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeCacheDescribe,
			pgx.QueryExecModeDescribeExec, pgx.QueryExecModeExec, pgx.QueryExecModeSimpleProtocol} {
			t.Run(mode.String(), func(t *testing.T) {
				c := connect(t, "default_query_exec_mode", strings.ReplaceAll(mode.String(), " ", "_"))
				var got int
				var s string
				for i := range 5 {
					require.NoError(t, c.QueryRow(ctx, "SELECT $1::int + 1, $2::text", i, "x").Scan(&got, &s))
					require.Equal(t, i+1, got)
				}
				var v string
				require.NoError(t, c.QueryRow(ctx, "SHOW atrium.version").Scan(&v))
				require.Equal(t, "test-version", v)
				require.NoError(t, c.QueryRow(ctx, "show atrium.version;").Scan(&v))
				require.Equal(t, "test-version", v)
				// A real statement after the virtual one still works.
				require.NoError(t, c.QueryRow(ctx, "SELECT 41 + 1").Scan(&got))
				require.Equal(t, 42, got)
			})
		}
		_, err := setup.Prepare(ctx, "named", "SELECT k FROM kv WHERE k = $1")
		require.NoError(t, err)
	})

	t.Run("batch mixing real and virtual statements", func(t *testing.T) {
		c := connect(t)
		b := &pgx.Batch{}
		b.Queue("INSERT INTO kv VALUES ($1, $2)", 1, "one")
		b.Queue("SHOW atrium.version")
		b.Queue("SELECT v FROM kv WHERE k = $1", 1)
		b.Queue("SHOW atrium.version")
		br := c.SendBatch(ctx, b)
		_, err := br.Exec()
		require.NoError(t, err)
		var s string
		require.NoError(t, br.QueryRow().Scan(&s))
		require.Equal(t, "test-version", s)
		require.NoError(t, br.QueryRow().Scan(&s))
		require.Equal(t, "one", s)
		require.NoError(t, br.QueryRow().Scan(&s))
		require.Equal(t, "test-version", s)
		require.NoError(t, br.Close())
		require.Equal(t, byte('I'), c.PgConn().TxStatus())
	})

	t.Run("batch with an error rolls back the pipeline", func(t *testing.T) {
		c := connect(t)
		b := &pgx.Batch{}
		b.Queue("INSERT INTO kv VALUES (100, 'x')")
		b.Queue("SELECT 1/0")
		b.Queue("SHOW atrium.version")
		err := c.SendBatch(ctx, b).Close()
		var pe *pgconn.PgError
		require.ErrorAs(t, err, &pe)
		require.Equal(t, "22012", pe.Code)
		var n int
		require.NoError(t, c.QueryRow(ctx, "SELECT count(*) FROM kv WHERE k = 100").Scan(&n))
		require.Zero(t, n)
	})

	t.Run("low-level pipeline", func(t *testing.T) {
		c := connect(t)
		pl := c.PgConn().StartPipeline(ctx)
		pl.SendPrepare("p1", "SELECT $1::int * 2", nil)
		pl.SendQueryParams("SELECT $1::text", [][]byte{[]byte("a")}, nil, nil, nil)
		pl.SendQueryParams("SHOW atrium.version", nil, nil, nil, nil)
		require.NoError(t, pl.Sync())
		pl.SendQueryPrepared("p1", [][]byte{[]byte("21")}, nil, nil)
		require.NoError(t, pl.Sync())
		var got []string
		for {
			res, err := pl.GetResults()
			require.NoError(t, err)
			if res == nil {
				break
			}
			switch r := res.(type) {
			case *pgconn.ResultReader:
				rr := r.Read()
				require.NoError(t, rr.Err)
				for _, row := range rr.Rows {
					got = append(got, string(row[0]))
				}
			case *pgconn.PipelineSync:
				got = append(got, "sync")
			}
		}
		require.NoError(t, pl.Close())
		require.Equal(t, []string{"a", "test-version", "sync", "42", "sync"}, got)
	})

	t.Run("copy from", func(t *testing.T) {
		c := connect(t)
		rows := make([][]any, 5000)
		for i := range rows {
			rows[i] = []any{1000 + i, fmt.Sprintf("value %d", i)}
		}
		n, err := c.CopyFrom(ctx, pgx.Identifier{"kv"}, []string{"k", "v"}, pgx.CopyFromRows(rows))
		require.NoError(t, err)
		require.EqualValues(t, 5000, n)
		var cnt int
		require.NoError(t, c.QueryRow(ctx, "SELECT count(*) FROM kv WHERE k >= 1000").Scan(&cnt))
		require.Equal(t, 5000, cnt)
	})

	t.Run("listen notify", func(t *testing.T) {
		l := connect(t)
		_, err := l.Exec(ctx, "LISTEN atrium_test")
		require.NoError(t, err)
		s := connect(t)
		_, err = s.Exec(ctx, "SELECT pg_notify('atrium_test', 'hello')")
		require.NoError(t, err)
		wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
		defer wcancel()
		n, err := l.WaitForNotification(wctx)
		require.NoError(t, err)
		require.Equal(t, "hello", n.Payload)
	})

	t.Run("context timeout cancels the server query", func(t *testing.T) {
		c := connect(t, "application_name", "atrium_cancel_test")
		qctx, qcancel := context.WithTimeout(ctx, 500*time.Millisecond)
		defer qcancel()
		_, err := c.Exec(qctx, "SELECT pg_sleep(30)")
		require.Error(t, err)
		var pe *pgconn.PgError
		if errors.As(err, &pe) {
			require.Equal(t, "57014", pe.Code)
		}
		require.Eventually(t, func() bool {
			var n int
			_ = setup.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'atrium_cancel_test' AND state = 'active'").Scan(&n)
			return n == 0
		}, 20*time.Second, 50*time.Millisecond)
	})

	t.Run("a cancel request on an idle session cancels nothing", func(t *testing.T) {
		// As with PostgreSQL, which ignores a cancel for a backend
		// waiting for a command: the next statement runs to its end.
		c := connect(t)
		require.NoError(t, c.PgConn().CancelRequest(ctx))
		var n int
		require.NoError(t, c.QueryRow(ctx, "SELECT count(*) FROM (SELECT pg_sleep(0.2)) s").Scan(&n))
		require.Equal(t, 1, n)
	})

	t.Run("large rows", func(t *testing.T) {
		c := connect(t)
		big := bytes.Repeat([]byte("0123456789abcdef"), 2<<20) // 32 MiB
		_, err := c.Exec(ctx, "INSERT INTO blobs VALUES (1, $1)", big)
		require.NoError(t, err)
		var got []byte
		require.NoError(t, c.QueryRow(ctx, "SELECT b FROM blobs WHERE id = 1").Scan(&got))
		require.True(t, bytes.Equal(big, got))
		var s string
		require.NoError(t, c.QueryRow(ctx, "SELECT repeat('x', 20*1024*1024)", pgx.QueryExecModeSimpleProtocol).Scan(&s))
		require.Len(t, s, 20<<20)
	})

	t.Run("many concurrent sessions", func(t *testing.T) {
		var wg sync.WaitGroup
		errs := make(chan error, 40)
		for i := range 40 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c, err := pgx.Connect(ctx, p.dsn(t, db))
				if err != nil {
					errs <- err
					return
				}
				defer c.Close(ctx)
				for j := range 25 {
					var got int
					if err := c.QueryRow(ctx, "SELECT $1::int", i*100+j).Scan(&got); err != nil || got != i*100+j {
						errs <- fmt.Errorf("session %d query %d: %v (%d)", i, j, err, got)
						return
					}
				}
				var v string
				if err := c.QueryRow(ctx, "SHOW atrium.version").Scan(&v); err != nil {
					errs <- err
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
	})

	t.Run("handler uses the client's upstream inside a transaction", func(t *testing.T) {
		for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeSimpleProtocol} {
			t.Run(mode.String(), func(t *testing.T) {
				c := connect(t, "default_query_exec_mode", strings.ReplaceAll(mode.String(), " ", "_"))
				tx, err := c.Begin(ctx)
				require.NoError(t, err)
				_, err = tx.Exec(ctx, "INSERT INTO kv VALUES (7, 'uncommitted')")
				require.NoError(t, err)
				// Only this session's transaction can see the row.
				var k int
				var v string
				require.NoError(t, tx.QueryRow(ctx, "ATRIUM STREAM SELECT k, v FROM kv WHERE k = 7").Scan(&k, &v))
				require.Equal(t, 7, k)
				require.Equal(t, "uncommitted", v)
				require.Equal(t, byte('T'), c.PgConn().TxStatus())
				// A server error inside the statement fails the transaction.
				err = tx.QueryRow(ctx, "ATRIUM STREAM SELECT 1/0").Scan(&k)
				var pe *pgconn.PgError
				require.ErrorAs(t, err, &pe)
				require.Equal(t, "22012", pe.Code)
				require.Equal(t, byte('E'), c.PgConn().TxStatus())
				require.NoError(t, tx.Rollback(ctx))
				var n int
				require.NoError(t, c.QueryRow(ctx, "SELECT count(*) FROM kv WHERE k = 7").Scan(&n))
				require.Zero(t, n)
			})
		}
	})

	t.Run("handler refused behind unsynced executes in a batch", func(t *testing.T) {
		c := connect(t)
		b := &pgx.Batch{}
		b.Queue("SELECT 1")
		b.Queue("ATRIUM STREAM SELECT 2")
		err := c.SendBatch(ctx, b).Close()
		var pe *pgconn.PgError
		require.ErrorAs(t, err, &pe)
		require.Equal(t, "0A000", pe.Code)
		var n int
		require.NoError(t, c.QueryRow(ctx, "SELECT 3").Scan(&n))
		require.Equal(t, 3, n)
	})

	require.NoError(t, setup.Close(ctx))
}
