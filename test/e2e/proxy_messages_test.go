package e2e

import (
	"encoding/binary"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/test/testdb"
)

// Malformed messages naming an intercepted statement get PostgreSQL's own
// answers (issue 9, finding 8): a NUL inside a Query is 08P01 "invalid
// message format" and the session goes on; Describe or Close with a subtype
// other than 'S' or 'P' is 08P01 and the pipeline is skipped to Sync.
func TestProxyMalformedMessagesAboutQuestions(t *testing.T) {
	db := testdb.New(t)
	p := startProxy(t, proxyOpts{})
	r := dialRaw(t, p.addr)
	r.startup(pgproto3.ProtocolVersion30, dbParams(t, db))

	readAll := func() (types string, errs []*pgproto3.ErrorResponse) {
		for {
			m, err := r.recv()
			require.NoError(t, err)
			b, err := m.Encode(nil)
			require.NoError(t, err)
			types += string(b[0])
			if e, ok := m.(*pgproto3.ErrorResponse); ok {
				cp := *e
				errs = append(errs, &cp)
			}
			if _, ok := m.(*pgproto3.ReadyForQuery); ok {
				return types, errs
			}
		}
	}

	// A Query whose string holds a NUL: the intercepted text before it
	// must not be answered.
	q := "SHOW atrium.version\x00SELECT 1\x00"
	msg := []byte{'Q', 0, 0, 0, 0}
	binary.BigEndian.PutUint32(msg[1:], uint32(4+len(q)))
	r.write(append(msg, q...))
	types, errs := readAll()
	require.Equal(t, "EZ", types)
	require.Equal(t, "08P01", errs[0].Code)
	require.Equal(t, "invalid message format", errs[0].Message)

	for _, m := range []pgproto3.FrontendMessage{
		&pgproto3.Describe{ObjectType: 'X', Name: ""},
		&pgproto3.Close{ObjectType: 'X', Name: ""},
	} {
		r.send(&pgproto3.Parse{Query: "SHOW atrium.version"}, &pgproto3.Bind{}, m, &pgproto3.Execute{}, &pgproto3.Sync{})
		types, errs = readAll()
		require.Equal(t, "12EZ", types, "%T", m)
		require.Equal(t, "08P01", errs[0].Code)
		require.Contains(t, errs[0].Message, "message subtype 88")
	}

	// The session is intact.
	r.send(&pgproto3.Query{String: "SHOW atrium.version"})
	types, errs = readAll()
	require.Empty(t, errs)
	require.Equal(t, "TDCZ", types)
}
