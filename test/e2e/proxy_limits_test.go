package e2e

import (
	"bytes"
	"encoding/binary"
	"runtime"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/proxy"
	"github.com/atriumdb/atrium/test/testdb"
)

// queryMsg builds a Query of about size bytes by hand, so that no client
// buffer keeps a copy.
func queryMsg(size int) []byte {
	q := append(append([]byte("SELECT length('"), bytes.Repeat([]byte("x"), size)...), "')\x00"...)
	b := make([]byte, 5, 5+len(q))
	b[0] = 'Q'
	binary.BigEndian.PutUint32(b[1:], uint32(4+len(q)))
	return append(b, q...)
}

// A client message over --max-message-size gets a 54000 ErrorResponse the
// client can read before the connection closes, even while the client is
// still sending it (issue 11: closing with unread input reset the
// connection and the client never saw the error).
func TestProxyOversizedMessageIsReported(t *testing.T) {
	db := testdb.New(t)
	p := startProxy(t, proxyOpts{cfg: proxy.Config{MaxMessageSize: 64 << 10}})
	r := dialRaw(t, p.addr)
	r.startup(pgproto3.ProtocolVersion30, dbParams(t, db))
	// Like JDBC, the client writes the whole message (far more than socket
	// buffers hold) before it reads anything. Before the fix the proxy
	// closed with the rest unread, the connection was reset, and the
	// client's write failed without the error ever being read.
	_, err := r.nc.Write(queryMsg(16 << 20))
	require.NoError(t, err, "the proxy must take the refused message in before closing")
	e := r.expectError()
	require.Equal(t, "54000", e.Code)
	require.Equal(t, "FATAL", e.Severity)
	r.expectClosed()
}

// PostgreSQL takes client messages up to 1 GB, so the proxy does too by
// default.
func TestProxyDefaultMessageLimitIsPostgreSQLs(t *testing.T) {
	var c proxy.Config
	require.NoError(t, c.Validate())
	require.Equal(t, 0x3fffffff-1-4, c.MaxMessageSize)
}

// A session that once received a large Query does not keep the buffer that
// held it (issue 11: three idle sessions that once sent a 100 MB query held
// 365 MiB of heap).
func TestProxyIdleSessionsReturnLargeBuffers(t *testing.T) {
	db := testdb.New(t)
	p := startProxy(t, proxyOpts{})
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	var clients []*rawClient
	for range 3 {
		r := dialRaw(t, p.addr)
		r.startup(pgproto3.ProtocolVersion30, dbParams(t, db))
		clients = append(clients, r)
	}
	before := heap()
	const size = 32 << 20
	for _, r := range clients {
		r.write(queryMsg(size))
		for {
			m, err := r.recv()
			require.NoError(t, err)
			if e, ok := m.(*pgproto3.ErrorResponse); ok {
				t.Fatalf("query failed: %s", e.Message)
			}
			if _, ok := m.(*pgproto3.ReadyForQuery); ok {
				break
			}
		}
	}
	// The sessions are idle and open; what they hold now is what they
	// keep. Before the fix each kept 40 MiB (the body and growth room).
	after := heap()
	grown := int64(after) - int64(before)
	t.Logf("heap before %d MiB, after %d MiB", before>>20, after>>20)
	require.Less(t, grown, int64(size), "idle sessions keep %d MiB", grown>>20)
	for _, r := range clients {
		r.send(&pgproto3.Terminate{})
	}
}
