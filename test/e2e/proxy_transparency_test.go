package e2e

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"syscall"
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

// TestProxyRealBackendPID: the process id a client gets in BackendKeyData
// is the upstream backend's, so everything that names a backend by pid
// works through Atrium as it does directly, while the secret that cancels
// it stays Atrium's.
func TestProxyRealBackendPID(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	db := testdb.New(t)
	p := startProxy(t, proxyOpts{})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	connect := func(t *testing.T, extra ...string) *pgx.Conn {
		t.Helper()
		c, err := pgx.Connect(ctx, p.dsn(t, db, extra...))
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close(context.Background()) })
		return c
	}

	t.Run("BackendKeyData pid is pg_backend_pid()", func(t *testing.T) {
		c := connect(t, "application_name", "atrium_pid_test")
		var pid uint32
		require.NoError(t, c.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid))
		require.Equal(t, pid, c.PgConn().PID())
		// Monitoring that joins a client's pid to pg_stat_activity finds it.
		var app string
		require.NoError(t, c.QueryRow(ctx, "SELECT application_name FROM pg_stat_activity WHERE pid = $1", c.PgConn().PID()).Scan(&app))
		require.Equal(t, "atrium_pid_test", app)
	})

	t.Run("pg_terminate_backend(conn.PID()) works", func(t *testing.T) {
		victim := connect(t)
		admin := connect(t)
		var ok bool
		require.NoError(t, admin.QueryRow(ctx, "SELECT pg_terminate_backend($1)", victim.PgConn().PID()).Scan(&ok))
		require.True(t, ok, "pg_terminate_backend found the backend")
		_, err := victim.Exec(ctx, "SELECT 1")
		require.Error(t, err, "the terminated session is gone")
	})

	t.Run("a client ignores its own notifications by pid", func(t *testing.T) {
		c := connect(t)
		_, err := c.Exec(ctx, "LISTEN atrium_own")
		require.NoError(t, err)
		_, err = c.Exec(ctx, "NOTIFY atrium_own, 'mine'")
		require.NoError(t, err)
		wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
		defer wcancel()
		n, err := c.WaitForNotification(wctx)
		require.NoError(t, err)
		require.Equal(t, "mine", n.Payload)
		require.Equal(t, c.PgConn().PID(), n.PID, "the notification names the client's own pid")
	})

	t.Run("a cancel with a wrong secret for a real pid does nothing", func(t *testing.T) {
		c := connect(t, "application_name", "atrium_wrong_secret")
		admin := connect(t)
		pid := c.PgConn().PID()
		secret := c.PgConn().SecretKey()
		wrong := bytes.Clone(secret)
		wrong[0] ^= 0xff

		done := make(chan error, 1)
		go func() {
			_, err := c.Exec(ctx, "SELECT pg_sleep(3)")
			done <- err
		}()
		active := func() bool {
			var n int
			require.NoError(t, admin.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE pid = $1 AND state = 'active'", pid).Scan(&n))
			return n == 1
		}
		require.Eventually(t, active, 20*time.Second, 20*time.Millisecond)
		// Atrium closes a CancelRequest's connection only after it has
		// served it, so once this returns a forwarded cancel would have
		// reached the backend.
		sendCancel(t, p.addr, pid, wrong)
		require.True(t, active(), "the query still runs after the wrong-secret cancel")
		require.NoError(t, <-done, "the query was not cancelled")

		// The right secret, sent the same way, does cancel.
		go func() {
			_, err := c.Exec(ctx, "SELECT pg_sleep(30)")
			done <- err
		}()
		require.Eventually(t, active, 20*time.Second, 20*time.Millisecond)
		sendCancel(t, p.addr, pid, secret)
		err := <-done
		var pe *pgconn.PgError
		require.ErrorAs(t, err, &pe)
		require.Equal(t, "57014", pe.Code)
	})
}

// sendCancel sends a CancelRequest and waits for the server to close the
// connection.
func sendCancel(t testing.TB, addr string, pid uint32, secret []byte) {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 10*time.Second)
	require.NoError(t, err)
	defer nc.Close()
	b, err := (&pgproto3.CancelRequest{ProcessID: pid, SecretKey: secret}).Encode(nil)
	require.NoError(t, err)
	_, err = nc.Write(b)
	require.NoError(t, err)
	_ = nc.SetReadDeadline(time.Now().Add(20 * time.Second))
	n, err := io.Copy(io.Discard, nc)
	require.NoError(t, err, "the server closes the cancel connection")
	require.Zero(t, n, "no reply to a CancelRequest")
}

// exchange writes pkt on a new connection and returns everything the server
// sends until it closes the connection.
func exchange(t testing.TB, addr string, pkt []byte) []byte {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 10*time.Second)
	require.NoError(t, err)
	defer nc.Close()
	_, err = nc.Write(pkt)
	require.NoError(t, err)
	_ = nc.SetReadDeadline(time.Now().Add(20 * time.Second))
	reply, err := io.ReadAll(nc)
	var ne net.Error
	require.False(t, errors.As(err, &ne) && ne.Timeout(), "the server left the connection open")
	return reply
}

// TestProxyStartupLikePostgres sends broken and unsupported startup packets
// to PostgreSQL and to Atrium in front of it and expects the same answer.
func TestProxyStartupLikePostgres(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	p := startProxy(t, proxyOpts{})
	direct := upstreamAddr(t)

	// Packets PostgreSQL answers by closing the socket without a reply
	// (node-postgres crashes on an ErrorResponse here) or with a reply
	// Atrium must pass on byte for byte: the server's own versions, in
	// the old protocol's format for a 2.0 client.
	for name, pkt := range map[string][]byte{
		"Terminate before startup": {'X', 0, 0, 0, 4},
		"length below minimum":     {0, 0, 0, 3, 0, 3, 0, 0},
		"absurd length":            {0x7f, 0, 0, 0},
		"protocol 2.0":             startupPacket(2<<16, []byte("user\x00postgres\x00\x00")),
		"protocol 4.0":             startupPacket(4<<16, []byte("user\x00postgres\x00\x00")),
		"protocol 1234.0":          startupPacket(1234<<16, []byte("user\x00postgres\x00\x00")),
	} {
		t.Run(name, func(t *testing.T) {
			want := exchange(t, direct, pkt)
			got := exchange(t, p.addr, pkt)
			require.Equal(t, string(want), string(got))
		})
	}

	// Malformed parameter lists get a FATAL from both; Atrium's lacks the
	// server's source file and line fields, so compare what clients show.
	for name, pkt := range map[string][]byte{
		"unterminated parameters": startupPacket(3<<16, []byte("user\x00postgres")),
		"data after terminator":   startupPacket(3<<16, []byte("user\x00postgres\x00\x00junk")),
	} {
		t.Run(name, func(t *testing.T) {
			decode := func(b []byte) *pgproto3.ErrorResponse {
				t.Helper()
				require.Greater(t, len(b), 5)
				require.Equal(t, byte('E'), b[0])
				var e pgproto3.ErrorResponse
				require.NoError(t, e.Decode(b[5:]))
				return &e
			}
			want := decode(exchange(t, direct, pkt))
			got := decode(exchange(t, p.addr, pkt))
			require.Equal(t, [3]string{want.Severity, want.Code, want.Message}, [3]string{got.Severity, got.Code, got.Message})
		})
	}
}

// TestProxySilentConnections opens 2,000 TCP connections that never send a
// startup packet: they must not use up --max-connections, so a real client
// still gets in, and each is closed without a reply once it waits longer
// than the startup-packet timeout.
func TestProxySilentConnections(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	fdsBefore := openFDs(t)
	t.Cleanup(func() {
		goleak.VerifyNone(t, ignore)
		require.Eventually(t, func() bool { return openFDs(t) <= fdsBefore+2 }, 30*time.Second, 50*time.Millisecond,
			"fds before %d, after %d", fdsBefore, openFDs(t))
	})
	const silent = 2000
	// Both ends of every socket live in this process.
	var lim syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim))
	if need := uint64(2*silent + 1000); lim.Cur < need {
		if lim.Max < need {
			t.Skipf("RLIMIT_NOFILE hard limit %d is below the %d descriptors this test needs", lim.Max, need)
		}
		old := lim
		lim.Cur = need
		require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim))
		t.Cleanup(func() { _ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old) })
	}
	db := testdb.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	t.Run("do not lock out a real client", func(t *testing.T) {
		p := startProxy(t, proxyOpts{}) // default limits
		conns := make([]net.Conn, 0, silent)
		defer func() {
			for _, c := range conns {
				_ = c.Close()
			}
		}()
		for range silent {
			c, err := net.DialTimeout("tcp", p.addr, 10*time.Second)
			require.NoError(t, err)
			conns = append(conns, c)
		}
		// Wait until the proxy has accepted them all, so that the real
		// clients below arrive behind the flood, not before it.
		require.Eventually(t, func() bool { return p.srv.Connections() >= proxy.DefaultMaxStartupConns }, 60*time.Second, 20*time.Millisecond)

		c, err := pgx.Connect(ctx, p.dsn(t, db))
		require.NoError(t, err, "pgx connects past %d silent connections", silent)
		var one int
		require.NoError(t, c.QueryRow(ctx, "SELECT 1").Scan(&one))
		require.NoError(t, c.Close(ctx))
		out, err := psqlCmd(ctx, p.dsn(t, db), "-Atc", "SELECT 42").CombinedOutput()
		require.NoError(t, err, "psql: %s", out)
		require.Equal(t, "42\n", string(out))
		require.LessOrEqual(t, p.srv.Connections(), proxy.DefaultMaxStartupConns+1, "the oldest silent connections were shed")

		// The shed ones were closed without a reply.
		_ = conns[0].SetReadDeadline(time.Now().Add(20 * time.Second))
		n, err := conns[0].Read(make([]byte, 1))
		require.Zero(t, n)
		require.ErrorIs(t, err, io.EOF)
	})

	t.Run("closed without a reply after the startup-packet timeout", func(t *testing.T) {
		p := startProxy(t, proxyOpts{cfg: proxy.Config{StartupPacketTimeout: 300 * time.Millisecond}})
		nc, err := net.DialTimeout("tcp", p.addr, 10*time.Second)
		require.NoError(t, err)
		defer nc.Close()
		_ = nc.SetReadDeadline(time.Now().Add(20 * time.Second))
		reply, err := io.ReadAll(nc)
		require.NoError(t, err)
		require.Empty(t, reply)
		// A client that sends its startup packet in time is served.
		r := dialRaw(t, p.addr)
		r.startup(pgproto3.ProtocolVersion30, dbParams(t, db))
	})
}
