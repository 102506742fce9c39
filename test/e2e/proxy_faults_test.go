package e2e

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
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

// rawClient speaks the protocol by hand, to send what drivers never would.
type rawClient struct {
	t  testing.TB
	nc net.Conn
	fe *pgproto3.Frontend
}

func dialRaw(t testing.TB, addr string) *rawClient {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 10*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { _ = nc.Close() })
	return &rawClient{t: t, nc: nc, fe: pgproto3.NewFrontend(nc, nc)}
}

func (r *rawClient) write(b []byte) {
	r.t.Helper()
	_, err := r.nc.Write(b)
	require.NoError(r.t, err)
}

func (r *rawClient) send(msgs ...pgproto3.FrontendMessage) {
	r.t.Helper()
	for _, m := range msgs {
		r.fe.Send(m)
	}
	require.NoError(r.t, r.fe.Flush())
}

// recv reads the next message, failing the test after 20 s.
func (r *rawClient) recv() (pgproto3.BackendMessage, error) {
	_ = r.nc.SetReadDeadline(time.Now().Add(20 * time.Second))
	return r.fe.Receive()
}

// expectError reads until an ErrorResponse and returns it.
func (r *rawClient) expectError() *pgproto3.ErrorResponse {
	r.t.Helper()
	for {
		m, err := r.recv()
		require.NoError(r.t, err, "waiting for an ErrorResponse")
		if e, ok := m.(*pgproto3.ErrorResponse); ok {
			cp := *e
			return &cp
		}
	}
}

// expectClosed asserts that the proxy closes the connection.
func (r *rawClient) expectClosed() {
	r.t.Helper()
	for {
		_, err := r.recv()
		if err != nil {
			var ne net.Error
			require.False(r.t, errors.As(err, &ne) && ne.Timeout(), "connection still open")
			return
		}
	}
}

// startup sends a StartupMessage of protocol version v and reads to
// ReadyForQuery, returning the messages seen.
func (r *rawClient) startup(v uint32, params map[string]string) []pgproto3.BackendMessage {
	r.t.Helper()
	r.send(&pgproto3.StartupMessage{ProtocolVersion: v, Parameters: params})
	var seen []pgproto3.BackendMessage
	for {
		m, err := r.recv()
		require.NoError(r.t, err)
		switch m := m.(type) {
		case *pgproto3.ErrorResponse:
			r.t.Fatalf("startup failed: %s %s", m.Code, m.Message)
		case *pgproto3.ReadyForQuery:
			return seen
		case *pgproto3.NegotiateProtocolVersion:
			cp := *m
			seen = append(seen, &cp)
		case *pgproto3.BackendKeyData:
			cp := *m
			seen = append(seen, &cp)
		}
	}
}

func dbParams(t testing.TB, dsn string, extra ...string) map[string]string {
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	p := map[string]string{"user": u.User.Username(), "database": strings.TrimPrefix(u.Path, "/")}
	for i := 0; i+1 < len(extra); i += 2 {
		p[extra[i]] = extra[i+1]
	}
	return p
}

func startupPacket(version uint32, rest []byte) []byte {
	b := make([]byte, 8, 8+len(rest))
	binary.BigEndian.PutUint32(b[4:], version)
	b = append(b, rest...)
	binary.BigEndian.PutUint32(b, uint32(len(b)))
	return b
}

func TestProxyFaults(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	fdsBefore := openFDs(t)
	t.Cleanup(func() {
		goleak.VerifyNone(t, ignore)
		// Every socket the proxy opened is closed again (a little slack
		// for descriptors the runtime or pgx keep, e.g. epoll).
		require.Eventually(t, func() bool { return openFDs(t) <= fdsBefore+2 }, 10*time.Second, 50*time.Millisecond,
			"fds before %d, after %d", fdsBefore, openFDs(t))
	})
	db := testdb.New(t)
	p := startProxy(t, proxyOpts{cfg: proxy.Config{MaxMessageSize: 64 << 10}})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	t.Run("unknown protocol versions", func(t *testing.T) {
		// 2.0 gets the old protocol's error format: see
		// TestProxyStartupLikePostgres.
		for _, v := range []uint32{4 << 16, 1234 << 16} {
			r := dialRaw(t, p.addr)
			r.write(startupPacket(v, []byte("user\x00postgres\x00\x00")))
			e := r.expectError()
			require.Equal(t, "0A000", e.Code)
			require.Equal(t, "FATAL", e.Severity)
			r.expectClosed()
		}
	})

	t.Run("malformed startup packets", func(t *testing.T) {
		// A bad length gets no reply, as from PostgreSQL.
		for _, pkt := range [][]byte{
			{0, 0, 0, 3, 0, 3, 0, 0}, // length below minimum
			{0x7f, 0, 0, 0},          // absurd length
		} {
			reply := exchange(t, p.addr, pkt)
			require.Empty(t, reply)
		}
		for _, pkt := range [][]byte{
			startupPacket(3<<16, []byte("user\x00postgres")), // unterminated
			startupPacket(3<<16, []byte("user\x00postgres\x00\x00junk")),
		} {
			r := dialRaw(t, p.addr)
			r.write(pkt)
			e := r.expectError()
			require.Equal(t, "08P01", e.Code)
			r.expectClosed()
		}
	})

	t.Run("missing user", func(t *testing.T) {
		r := dialRaw(t, p.addr)
		r.write(startupPacket(3<<16, []byte("database\x00postgres\x00\x00")))
		require.Equal(t, "28000", r.expectError().Code)
	})

	t.Run("replication refused", func(t *testing.T) {
		out, err := psqlCmd(ctx, p.dsn(t, db, "replication", "database"), "-c", "IDENTIFY_SYSTEM").CombinedOutput()
		require.Error(t, err)
		require.Contains(t, string(out), "replication connections are not supported through Atrium")
	})

	t.Run("oversized message", func(t *testing.T) {
		r := dialRaw(t, p.addr)
		r.startup(pgproto3.ProtocolVersion30, dbParams(t, db))
		r.send(&pgproto3.Query{String: "SELECT '" + strings.Repeat("x", 100<<10) + "'"})
		e := r.expectError()
		require.Equal(t, "54000", e.Code)
		r.expectClosed()
	})

	t.Run("invalid message type and length", func(t *testing.T) {
		r := dialRaw(t, p.addr)
		r.startup(pgproto3.ProtocolVersion30, dbParams(t, db))
		r.write([]byte{'z', 0, 0, 0, 4})
		require.Equal(t, "08P01", r.expectError().Code)
		r.expectClosed()

		r = dialRaw(t, p.addr)
		r.startup(pgproto3.ProtocolVersion30, dbParams(t, db))
		r.write([]byte{'Q', 0, 0, 0, 2})
		require.Equal(t, "08P01", r.expectError().Code)
		r.expectClosed()

		r = dialRaw(t, p.addr)
		r.startup(pgproto3.ProtocolVersion30, dbParams(t, db))
		r.write([]byte{'Q', 0, 0, 0, 7, 'a', 'b', 'c'}) // not NUL-terminated
		require.Equal(t, "08P01", r.expectError().Code)
		r.expectClosed()
	})

	t.Run("protocol 3.2 is negotiated by the upstream", func(t *testing.T) {
		r := dialRaw(t, p.addr)
		seen := r.startup(pgproto3.ProtocolVersion32, dbParams(t, db))
		var sawNegotiate, sawKey bool
		for _, m := range seen {
			switch m := m.(type) {
			case *pgproto3.NegotiateProtocolVersion:
				sawNegotiate = true
				require.EqualValues(t, pgproto3.ProtocolVersion30, m.NewestMinorProtocol)
			case *pgproto3.BackendKeyData:
				sawKey = true
				require.Len(t, m.SecretKey, 4) // PostgreSQL 15 speaks 3.0
			}
		}
		require.True(t, sawNegotiate, "NegotiateProtocolVersion relayed")
		require.True(t, sawKey)
		r.send(&pgproto3.Query{String: "SELECT 1"})
		for {
			m, err := r.recv()
			require.NoError(t, err)
			if _, ok := m.(*pgproto3.ReadyForQuery); ok {
				break
			}
		}
	})

	t.Run("GSSENCRequest is declined", func(t *testing.T) {
		r := dialRaw(t, p.addr)
		r.write([]byte{0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x30})
		var b [1]byte
		_, err := io.ReadFull(r.nc, b[:])
		require.NoError(t, err)
		require.Equal(t, byte('N'), b[0])
		r.startup(pgproto3.ProtocolVersion30, dbParams(t, db))
	})

	t.Run("cancel request with an unknown key", func(t *testing.T) {
		r := dialRaw(t, p.addr)
		r.send(&pgproto3.CancelRequest{ProcessID: 1234, SecretKey: []byte{1, 2, 3, 4}})
		r.expectClosed()
	})

	t.Run("client disconnect cancels the upstream query", func(t *testing.T) {
		r := dialRaw(t, p.addr)
		r.startup(pgproto3.ProtocolVersion30, dbParams(t, db, "application_name", "atrium_disconnect"))
		r.send(&pgproto3.Query{String: "SELECT pg_sleep(30)"})
		admin, err := pgx.Connect(ctx, db)
		require.NoError(t, err)
		defer admin.Close(ctx)
		count := func(q string) int {
			var n int
			require.NoError(t, admin.QueryRow(ctx, q).Scan(&n))
			return n
		}
		require.Eventually(t, func() bool {
			return count("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'atrium_disconnect' AND state = 'active'") == 1
		}, 20*time.Second, 50*time.Millisecond)
		require.NoError(t, r.nc.Close())
		require.Eventually(t, func() bool {
			return count("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'atrium_disconnect'") == 0
		}, 20*time.Second, 50*time.Millisecond, "the backend is gone, not left running pg_sleep")
	})

	t.Run("max connections", func(t *testing.T) {
		small := startProxy(t, proxyOpts{cfg: proxy.Config{MaxConnections: 2}})
		var conns []*pgx.Conn
		for range 2 {
			c, err := pgx.Connect(ctx, small.dsn(t, db))
			require.NoError(t, err)
			conns = append(conns, c)
		}
		_, err := pgx.Connect(ctx, small.dsn(t, db))
		var pe *pgconn.PgError
		require.ErrorAs(t, err, &pe)
		require.Equal(t, "53300", pe.Code)
		require.NoError(t, conns[0].Close(ctx))
		require.Eventually(t, func() bool { return small.srv.Sessions() < 2 }, 10*time.Second, 20*time.Millisecond)
		c, err := pgx.Connect(ctx, small.dsn(t, db))
		require.NoError(t, err)
		require.NoError(t, c.Close(ctx))
		require.NoError(t, conns[1].Close(ctx))
	})

	t.Run("idle timeout", func(t *testing.T) {
		idle := startProxy(t, proxyOpts{cfg: proxy.Config{IdleTimeout: 300 * time.Millisecond}})
		r := dialRaw(t, idle.addr)
		r.startup(pgproto3.ProtocolVersion30, dbParams(t, db))
		// A query longer than the timeout is not idleness.
		r.send(&pgproto3.Query{String: "SELECT pg_sleep(0.8)"})
		for {
			m, err := r.recv()
			require.NoError(t, err)
			if _, ok := m.(*pgproto3.ErrorResponse); ok {
				t.Fatal("session closed while a query ran")
			}
			if _, ok := m.(*pgproto3.ReadyForQuery); ok {
				break
			}
		}
		e := r.expectError()
		require.Equal(t, "57P05", e.Code)
		r.expectClosed()
		require.Eventually(t, func() bool {
			for _, reason := range idle.obs.reasons() {
				if reason == proxy.EndIdleTimeout {
					return true
				}
			}
			return false
		}, 5*time.Second, 20*time.Millisecond)
	})

	t.Run("upstream down", func(t *testing.T) {
		down := startProxy(t, proxyOpts{cfg: proxy.Config{Upstream: fmt.Sprintf("127.0.0.1:%d", freePort(t)), ConnectTimeout: 2 * time.Second}})
		_, err := pgx.Connect(ctx, down.dsn(t, db))
		var pe *pgconn.PgError
		require.ErrorAs(t, err, &pe)
		require.Equal(t, "08001", pe.Code)
	})

	t.Run("bytes after SSLRequest are refused", func(t *testing.T) {
		dir := t.TempDir()
		cert, key := writeSelfSigned(t, dir)
		tp := startProxy(t, proxyOpts{cfg: proxy.Config{TLSCert: cert, TLSKey: key}})
		r := dialRaw(t, tp.addr)
		req := []byte{0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f}
		r.write(append(req, startupPacket(3<<16, []byte("user\x00postgres\x00\x00"))...))
		var b [1]byte
		_, err := io.ReadFull(r.nc, b[:])
		require.NoError(t, err)
		require.Equal(t, byte('S'), b[0])
		e := r.expectError()
		require.Equal(t, "08P01", e.Code)
		require.Contains(t, e.Message, "unencrypted data after SSL request")
		r.expectClosed()

		// A well-behaved TLS client works, with psql and pgx.
		out, err := psqlCmd(ctx, tp.dsn(t, db, "sslmode", "require"), "-At", "-c", "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()", "-c", "SHOW atrium.version").CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Equal(t, "f\ntest-version\n", string(out)) // TLS ends at Atrium; upstream is plain here
		cfg, err := pgx.ParseConfig(tp.dsn(t, db, "sslmode", "require"))
		require.NoError(t, err)
		cfg.TLSConfig = &tls.Config{InsecureSkipVerify: true}
		c, err := pgx.ConnectConfig(ctx, cfg)
		require.NoError(t, err)
		var one int
		require.NoError(t, c.QueryRow(ctx, "SELECT 1").Scan(&one))
		require.NoError(t, c.Close(ctx))
	})

	t.Run("graceful shutdown", func(t *testing.T) {
		gp := startProxy(t, proxyOpts{})
		idleConn, err := pgx.Connect(ctx, gp.dsn(t, db))
		require.NoError(t, err)
		defer idleConn.Close(ctx)
		busy, err := pgx.Connect(ctx, gp.dsn(t, db))
		require.NoError(t, err)
		defer busy.Close(ctx)
		tx, err := busy.Begin(ctx)
		require.NoError(t, err)
		_, err = tx.Exec(ctx, "CREATE TABLE shutdown_probe (v int)")
		require.NoError(t, err)

		shut := make(chan error, 1)
		go func() {
			sctx, scancel := context.WithTimeout(ctx, 30*time.Second)
			defer scancel()
			shut <- gp.srv.Shutdown(sctx)
		}()
		// New connections are refused; the idle session is closed.
		require.Eventually(t, func() bool {
			c, err := pgx.Connect(ctx, gp.dsn(t, db))
			if err == nil {
				c.Close(ctx)
			}
			return err != nil
		}, 10*time.Second, 20*time.Millisecond)
		require.Eventually(t, func() bool { return idleConn.Ping(ctx) != nil }, 10*time.Second, 20*time.Millisecond)
		// The session in a transaction may finish it.
		_, err = tx.Exec(ctx, "INSERT INTO shutdown_probe VALUES (1)")
		require.NoError(t, err)
		require.NoError(t, tx.Commit(ctx))
		select {
		case err := <-shut:
			require.NoError(t, err)
		case <-time.After(30 * time.Second):
			t.Fatal("Shutdown did not return after the last transaction ended")
		}
		admin, err := pgx.Connect(ctx, db)
		require.NoError(t, err)
		defer admin.Close(ctx)
		var n int
		require.NoError(t, admin.QueryRow(ctx, "SELECT count(*) FROM shutdown_probe").Scan(&n))
		require.Equal(t, 1, n)
	})

	t.Run("shutdown timeout force-closes", func(t *testing.T) {
		gp := startProxy(t, proxyOpts{})
		busy, err := pgx.Connect(ctx, gp.dsn(t, db))
		require.NoError(t, err)
		defer busy.Close(ctx)
		_, err = busy.Exec(ctx, "BEGIN")
		require.NoError(t, err)
		sctx, scancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer scancel()
		require.ErrorIs(t, gp.srv.Shutdown(sctx), context.DeadlineExceeded)
		require.Error(t, busy.Ping(ctx))
		require.Zero(t, gp.srv.Sessions())
	})
}

// TestProxyUpstreamRestart stops and restarts a throwaway upstream under a
// live session: the client must get an error, not hang, and reconnect.
func TestProxyUpstreamRestart(t *testing.T) {
	cl := newCluster(t, []string{"host all all 127.0.0.1/32 trust"}, nil)
	p := startProxy(t, proxyOpts{cfg: proxy.Config{Upstream: cl.addr()}})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dsn := "postgres://postgres@" + p.addr + "/postgres?sslmode=disable"
	c, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer c.Close(ctx)
	require.NoError(t, c.Ping(ctx))

	cl.stop(t, "fast")
	err = c.Ping(ctx)
	require.Error(t, err)
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		require.Contains(t, []string{"57P01", "08006"}, pe.Code)
	}
	_, err = pgx.Connect(ctx, dsn)
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "08001", pe.Code)

	cl.start(t)
	c2, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	require.NoError(t, c2.Ping(ctx))
	require.NoError(t, c2.Close(ctx))
	_ = os.Getpid
}
