package proxy

import (
	"context"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// blockingStmt is a Statement whose Execute waits for release or for its
// context to end, recording how it ended.
type blockingStmt struct {
	started chan struct{}
	release chan struct{}
	mu      sync.Mutex
	err     error
}

func newBlockingStmt() *blockingStmt {
	return &blockingStmt{started: make(chan struct{}), release: make(chan struct{})}
}

func (b *blockingStmt) Describe(context.Context, Upstream) ([]pgproto3.FieldDescription, error) {
	return []pgproto3.FieldDescription{{Name: []byte("q"), DataTypeOID: 25, DataTypeSize: -1, TypeModifier: -1}}, nil
}

func (b *blockingStmt) Execute(ctx context.Context, _ Upstream, w RowWriter) (string, error) {
	close(b.started)
	select {
	case <-b.release:
	case <-ctx.Done():
		b.mu.Lock()
		b.err = ctx.Err()
		b.mu.Unlock()
		return "", ctx.Err()
	}
	if err := w.Row([][]byte{[]byte("answer")}); err != nil {
		return "", err
	}
	return "SELECT 1", nil
}

func (b *blockingStmt) ctxErr() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

func blockingHandler(st *blockingStmt) Handler {
	return HandlerFunc(func(_ context.Context, _ SessionInfo, sql string) (Statement, error) {
		if sql == "question" {
			return st, nil
		}
		return nil, nil
	})
}

// A client that closes its socket while a Statement runs cancels the
// Statement's context at once and ends the session, instead of leaving the
// Statement to run to its own timeout (issue 9, finding 6).
func TestStatementCancelledWhenClientCloses(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	for _, proto := range []string{"simple", "extended"} {
		t.Run(proto, func(t *testing.T) {
			st := newBlockingStmt()
			p := startPipeProxy(t, &fakeUpstream{}, blockingHandler(st))
			c, _ := p.connect(t)
			if proto == "simple" {
				c.fe.Send(&pgproto3.Query{String: "question"})
			} else {
				c.fe.Send(&pgproto3.Parse{Query: "question"})
				c.fe.Send(&pgproto3.Bind{})
				c.fe.Send(&pgproto3.Execute{MaxRows: 1})
				c.fe.Send(&pgproto3.Sync{})
			}
			go func() { _ = c.fe.Flush() }() // net.Pipe: the write completes as it is read
			// net.Pipe has no buffer: the proxy may answer Parse and Bind
			// before it reads Execute, and that write must not wait for a
			// reader (a TCP socket's buffer takes it). Draining ends when
			// the connection is closed below.
			drained := make(chan struct{})
			go func() { _, _ = io.Copy(io.Discard, c.nc); close(drained) }()
			defer func() { _ = c.nc.Close(); <-drained }()
			select {
			case <-st.started:
			case <-time.After(30 * time.Second):
				t.Fatal("statement never started")
			}
			require.NoError(t, c.nc.Close())
			// Generous deadline: the point is "now", not "at the
			// statement's own timeout" (which here is never).
			require.Eventually(t, func() bool { return st.ctxErr() != nil }, 20*time.Second, 5*time.Millisecond)
			require.ErrorIs(t, st.ctxErr(), context.Canceled)
			require.Eventually(t, func() bool { return p.srv.Sessions() == 0 }, 20*time.Second, 5*time.Millisecond)
		})
	}
}

// Messages a client pipelines behind a question while it runs are read by
// the watch but handed back in order: nothing is lost or reordered.
func TestStatementWatchKeepsPipelinedMessages(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	st := newBlockingStmt()
	up := &fakeUpstream{}
	p := startPipeProxy(t, up, blockingHandler(st))
	c, _ := p.connect(t)
	defer c.nc.Close()
	c.fe.Send(&pgproto3.Query{String: "question"})
	require.NoError(t, c.fe.Flush())
	<-st.started
	// Behind the running question: more than one watch buffer's worth of
	// simple queries and an extended-protocol batch.
	const n = 200
	flushed := make(chan error, 1)
	go func() {
		for i := range n {
			c.fe.Send(&pgproto3.Query{String: "select " + string(rune('a'+i%26)) + " /* padding to make the batch larger than a few kilobytes */"})
		}
		c.fe.Send(&pgproto3.Parse{Name: "s", Query: "select 2"})
		c.fe.Send(&pgproto3.Bind{PreparedStatement: "s"})
		c.fe.Send(&pgproto3.Execute{})
		c.fe.Send(&pgproto3.Sync{})
		flushed <- c.fe.Flush()
	}()
	// The watch reads the batch while the statement still runs (over
	// net.Pipe a write completes only as it is read).
	select {
	case err := <-flushed:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("pipelined messages were not read while the statement ran")
	}
	close(st.release)
	msgs := c.until(t, 'Z')
	require.Equal(t, "answer", string(msgs[1].(*pgproto3.DataRow).Values[0]))
	for range n {
		msgs = c.until(t, 'Z')
		require.Equal(t, "upstream", string(msgs[1].(*pgproto3.DataRow).Values[0]))
	}
	msgs = c.until(t, 'Z')
	var types []byte
	for _, m := range msgs {
		b, _ := m.Encode(nil)
		types = append(types, b[0])
	}
	require.Equal(t, "12CZ", string(types))
	up.mu.Lock()
	require.Len(t, up.queries, n+1)
	require.Equal(t, "select 2", up.queries[n])
	up.mu.Unlock()
	require.NoError(t, st.ctxErr())
}

// upstreamStmt runs one query upstream.
type upstreamStmt struct{ sql string }

func (u upstreamStmt) Describe(context.Context, Upstream) ([]pgproto3.FieldDescription, error) {
	return nil, nil
}

func (u upstreamStmt) Execute(ctx context.Context, up Upstream, _ RowWriter) (string, error) {
	_, err := up.Query(ctx, u.sql)
	return "DONE", err
}

// When the client is gone and the upstream answers neither the query nor
// the cancel, the session does not wait for it forever: it closes.
func TestClientGoneUpstreamSilent(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	up := &fakeUpstream{hang: "hang"}
	h := HandlerFunc(func(_ context.Context, _ SessionInfo, sql string) (Statement, error) {
		if sql == "question" {
			return upstreamStmt{sql: "hang"}, nil
		}
		return nil, nil
	})
	p := startPipeProxy(t, up, h)
	c, _ := p.connect(t)
	c.fe.Send(&pgproto3.Query{String: "question"})
	require.NoError(t, c.fe.Flush())
	require.Eventually(t, func() bool {
		up.mu.Lock()
		defer up.mu.Unlock()
		return len(up.queries) == 1
	}, 20*time.Second, 5*time.Millisecond)
	require.NoError(t, c.nc.Close())
	require.Eventually(t, func() bool {
		up.mu.Lock()
		defer up.mu.Unlock()
		return len(up.cancels) == 1
	}, 20*time.Second, 5*time.Millisecond, "no CancelRequest upstream")
	require.Eventually(t, func() bool { return p.srv.Sessions() == 0 }, 60*time.Second, 10*time.Millisecond)
}
