package e2e

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/proxy"
	"github.com/atriumdb/atrium/test/testdb"
)

// TestProxyRelayAllocs: the relay forwards ordinary traffic without a heap
// allocation per message, in both directions and both protocols (a
// per-message allocation, such as copying each query or encoding each
// header through an escaping array, costs GC time at every transaction).
// The client is a raw socket writing pre-encoded messages, so the process's
// allocations are the proxy's.
func TestProxyRelayAllocs(t *testing.T) {
	db := testdb.New(t)
	p := startProxy(t, proxyOpts{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pc, err := pgconn.Connect(ctx, p.dsn(t, db))
	require.NoError(t, err)
	hc, err := pc.Hijack()
	require.NoError(t, err)
	conn := hc.Conn
	defer conn.Close()

	enc := func(msgs ...pgproto3.FrontendMessage) []byte {
		var b []byte
		for _, m := range msgs {
			b, err = m.Encode(b)
			require.NoError(t, err)
		}
		return b
	}
	simple := enc(&pgproto3.Query{String: "SELECT 1 WHERE true"})
	prepare := enc(&pgproto3.Parse{Name: "s", Query: "SELECT $1::int + 1"}, &pgproto3.Sync{})
	extended := enc(&pgproto3.Bind{PreparedStatement: "s", ParameterFormatCodes: []int16{1},
		Parameters: [][]byte{{0, 0, 0, 41}}}, &pgproto3.Execute{}, &pgproto3.Sync{})

	r := bufio.NewReaderSize(conn, 1<<16)
	hdr := make([]byte, 5)
	body := make([]byte, 1<<16)
	var failure string
	roundTrip := func(msg []byte) {
		if _, err := conn.Write(msg); err != nil {
			failure = err.Error()
			return
		}
		for {
			if _, err := io.ReadFull(r, hdr); err != nil {
				failure = err.Error()
				return
			}
			n := int(binary.BigEndian.Uint32(hdr[1:])) - 4
			if _, err := io.ReadFull(r, body[:n]); err != nil {
				failure = err.Error()
				return
			}
			if hdr[0] == 'E' {
				failure = "server error: " + string(body[:n])
			}
			if hdr[0] == 'Z' {
				return
			}
		}
	}
	roundTrip(prepare)
	require.Empty(t, failure)

	for _, tc := range []struct {
		name string
		msg  []byte
	}{{"simple", simple}, {"extended", extended}} {
		for range 200 { // warm up: buffers and runtime caches
			roundTrip(tc.msg)
		}
		require.Empty(t, failure)
		const rounds = 2000
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range rounds {
			roundTrip(tc.msg)
		}
		runtime.ReadMemStats(&after)
		require.Empty(t, failure)
		perRound := float64(after.Mallocs-before.Mallocs) / rounds
		t.Logf("%s: %.3f allocations per round trip", tc.name, perRound)
		// A per-message allocation would show as 3 or more per round trip;
		// the margin is for the runtime's and the test framework's own.
		require.Less(t, perRound, 0.5, "%s: allocations per round trip through the relay", tc.name)
	}
}

// echoHandler claims "ATRIUM ECHO <text>" and answers with the text, kept
// in the Statement until it executes.
var echoHandler = proxy.HandlerFunc(func(_ context.Context, _ proxy.SessionInfo, sql string) (proxy.Statement, error) {
	text, ok := strings.CutPrefix(sql, "ATRIUM ECHO ")
	if !ok {
		return nil, nil
	}
	return &echoStmt{text: text}, nil
})

type echoStmt struct{ text string }

func (s *echoStmt) Describe(context.Context, proxy.Upstream) ([]pgproto3.FieldDescription, error) {
	return []pgproto3.FieldDescription{{Name: []byte("echo"), DataTypeOID: 25, DataTypeSize: -1, TypeModifier: -1}}, nil
}

func (s *echoStmt) Execute(_ context.Context, _ proxy.Upstream, w proxy.RowWriter) (string, error) {
	return "SELECT 1", w.Row([][]byte{[]byte(s.text)})
}

// TestProxyHandlerKeepsClaimedText: the relay offers statement text to the
// Handler as a view of its read buffer; a Handler that claims a statement
// and keeps (part of) its text must still see that text after the buffer
// has been reused by later messages.
func TestProxyHandlerKeepsClaimedText(t *testing.T) {
	db := testdb.New(t)
	p := startProxy(t, proxyOpts{handler: echoHandler})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := pgx.Connect(ctx, p.dsn(t, db))
	require.NoError(t, err)
	defer c.Close(ctx)

	_, err = c.Prepare(ctx, "kept", "ATRIUM ECHO the original text")
	require.NoError(t, err)
	for i := range 50 { // overwrite the session's read buffer
		var s string
		q := fmt.Sprintf("SELECT '%s'::text", strings.Repeat("x", 100+i))
		require.NoError(t, c.QueryRow(ctx, q, pgx.QueryExecModeSimpleProtocol).Scan(&s))
	}
	var got string
	require.NoError(t, c.QueryRow(ctx, "kept").Scan(&got))
	require.Equal(t, "the original text", got)

	// The simple protocol, twice on one connection.
	for _, want := range []string{"first", "second"} {
		require.NoError(t, c.QueryRow(ctx, "ATRIUM ECHO "+want, pgx.QueryExecModeSimpleProtocol).Scan(&got))
		require.Equal(t, want, got)
	}
}
