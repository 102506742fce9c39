package proxy

import (
	"bytes"
	"context"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// bigRows is a Statement of n rows of size bytes each; written counts the
// rows the session accepted.
type bigRows struct {
	n, size int
	written atomic.Int64
}

func (b *bigRows) Describe(context.Context, Upstream) ([]pgproto3.FieldDescription, error) {
	return []pgproto3.FieldDescription{{Name: []byte("pad"), DataTypeOID: 25, DataTypeSize: -1, TypeModifier: -1}}, nil
}

func (b *bigRows) Execute(_ context.Context, _ Upstream, w RowWriter) (string, error) {
	v := bytes.Repeat([]byte("x"), b.size)
	for range b.n {
		if err := w.Row([][]byte{v}); err != nil {
			return "", err
		}
		b.written.Add(1)
	}
	return "SELECT", nil
}

// A question's portal fetched with a row limit holds its rows in memory
// until they are fetched: that memory is bounded by MaxPortalBuffer, and a
// larger result fails with 54000 instead (issue 11: 400 rows of 1 MB took
// the proxy from 35 MB to 553 MB). Within the bound, fetching in parts works.
func TestSuspendedPortalMemoryIsBounded(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	const row = 1 << 20
	big, small := &bigRows{n: 400, size: row}, &bigRows{n: 6, size: row}
	h := HandlerFunc(func(_ context.Context, _ SessionInfo, sql string) (Statement, error) {
		switch sql {
		case "big":
			return big, nil
		case "small":
			return small, nil
		}
		return nil, nil
	})
	p := startPipeProxyConfig(t, Config{MaxPortalBuffer: 8 << 20}, &fakeUpstream{}, h)
	c, _ := p.connect(t)
	defer c.nc.Close()

	c.fe.Send(&pgproto3.Parse{Name: "big", Query: "big"})
	c.fe.Send(&pgproto3.Bind{DestinationPortal: "p", PreparedStatement: "big"})
	c.fe.Send(&pgproto3.Execute{Portal: "p", MaxRows: 10})
	c.fe.Send(&pgproto3.Sync{})
	require.NoError(t, c.fe.Flush())
	msgs := c.until(t, 'Z')
	e, ok := msgs[len(msgs)-2].(*pgproto3.ErrorResponse)
	require.True(t, ok, "want an error, got %T", msgs[len(msgs)-2])
	require.Equal(t, "54000", e.Code)
	// Ten rows went to the client at once; at most 8 MiB were held.
	require.LessOrEqual(t, big.written.Load(), int64(10+8), "rows held past the bound")

	// Six rows fit: fetched two at a time across PortalSuspended.
	c.fe.Send(&pgproto3.Parse{Name: "small", Query: "small"})
	c.fe.Send(&pgproto3.Bind{DestinationPortal: "q", PreparedStatement: "small"})
	for range 3 {
		c.fe.Send(&pgproto3.Execute{Portal: "q", MaxRows: 2})
	}
	c.fe.Send(&pgproto3.Execute{Portal: "q", MaxRows: 2})
	c.fe.Send(&pgproto3.Sync{})
	require.NoError(t, c.fe.Flush())
	msgs = c.until(t, 'Z')
	var types []byte
	for _, m := range msgs {
		b, _ := m.Encode(nil)
		types = append(types, b[0])
	}
	require.Equal(t, "12DDsDDsDDCCZ", string(types))
}
