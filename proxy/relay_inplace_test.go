package proxy

import (
	"bufio"
	"bytes"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"
)

// TestParseFields: the in-place path takes only a well-formed Parse, with
// exactly its parameter list; anything else goes to onParse, which relays
// it for the server to refuse.
func TestParseFields(t *testing.T) {
	body := func(p *pgproto3.Parse) []byte {
		b, err := p.Encode(nil)
		require.NoError(t, err)
		return b[5:]
	}
	good := body(&pgproto3.Parse{Name: "s1", Query: "SELECT $1::int", ParameterOIDs: []uint32{23}})
	name, query, ok := parseFields(good)
	require.True(t, ok)
	require.Equal(t, "s1", string(name))
	require.Equal(t, "SELECT $1::int", string(query))

	_, _, ok = parseFields(body(&pgproto3.Parse{Query: "SELECT 1"}))
	require.True(t, ok, "unnamed, no parameter types")

	for name, b := range map[string][]byte{
		"trailing byte":        append(bytes.Clone(good), 0),
		"short parameter list": good[:len(good)-1],
		"no parameter count":   []byte("s\x00SELECT 1\x00"),
		"unterminated query":   []byte("s\x00SELECT 1"),
		"unterminated name":    []byte("s"),
		"NUL inside the query": []byte("s\x00SELECT\x001\x00\x00\x00"),
		"empty":                {},
	} {
		_, _, ok := parseFields(b)
		require.False(t, ok, name)
	}
}

// TestNextMessage: a message wholly in the buffer comes back in place and
// unconsumed; a larger one has its header consumed and no frame.
func TestNextMessage(t *testing.T) {
	small, err := (&pgproto3.Query{String: "SELECT 1"}).Encode(nil)
	require.NoError(t, err)
	large, err := (&pgproto3.Query{String: string(bytes.Repeat([]byte("x"), 100))}).Encode(nil)
	require.NoError(t, err)
	r := bufio.NewReaderSize(bytes.NewReader(append(bytes.Clone(small), large...)), 64)

	typ, n, frame, err := nextMessage(r)
	require.NoError(t, err)
	require.Equal(t, byte('Q'), typ)
	require.Equal(t, len(small)-5, n)
	require.Equal(t, small, frame)
	_, _ = r.Discard(len(frame))

	typ, n, frame, err = nextMessage(r)
	require.NoError(t, err)
	require.Equal(t, byte('Q'), typ)
	require.Equal(t, len(large)-5, n)
	require.Nil(t, frame, "larger than the buffer: streamed")
	rest := make([]byte, n)
	_, err = r.Read(rest[:1])
	require.NoError(t, err)
	require.Equal(t, byte('x'), rest[0], "the header was consumed")

	_, _, _, err = nextMessage(bufio.NewReader(bytes.NewReader([]byte{'Q', 0, 0, 0, 3})))
	require.ErrorContains(t, err, "invalid message length 3")
}

// TestWriteHeaderNoAlloc: a relayed message's header is encoded into the
// write buffer, not through a heap-allocated array.
func TestWriteHeaderNoAlloc(t *testing.T) {
	w := bufio.NewWriterSize(&bytes.Buffer{}, 1<<16)
	allocs := testing.AllocsPerRun(1000, func() {
		if w.Available() < 64 {
			w.Reset(&bytes.Buffer{})
		}
		_ = writeHeader(w, 'D', 10)
	})
	require.Zero(t, allocs)
	var b bytes.Buffer
	w = bufio.NewWriterSize(&b, 16)
	for range 4 { // crosses the buffer's end
		require.NoError(t, writeHeader(w, 'Z', 1))
	}
	require.NoError(t, w.Flush())
	require.Equal(t, bytes.Repeat([]byte{'Z', 0, 0, 0, 5}, 4), b.Bytes())
}
