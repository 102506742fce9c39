package proxy

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// pipeListener hands out in-memory connections.
type pipeListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error   { l.once.Do(func() { close(l.closed) }); return nil }
func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

func (l *pipeListener) dial() net.Conn {
	a, b := net.Pipe()
	select {
	case l.conns <- b:
	case <-l.closed:
	}
	return a
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

// fakeUpstream is a scripted PostgreSQL server on net.Pipe: trust or SASL
// start-up, then a fixed answer per message type. It records what it saw.
type fakeUpstream struct {
	mu       sync.Mutex
	queries  []string
	cancels  []pgproto3.CancelRequest
	saslMech []string // offered mechanisms; nil: trust
	hang     string   // a Query the server never answers
	// hold, when set, makes the hang Query wait for a value on it and then
	// be answered.
	hold   chan struct{}
	onDial func() // called at each dial, outside mu
	dials  int
	wg     sync.WaitGroup
}

const fakePID, fakeSecret = 4242, "\x01\x02\x03\x04\x05\x06\x07\x08"

func (f *fakeUpstream) dial(context.Context, string, string) (net.Conn, error) {
	f.mu.Lock()
	f.dials++
	hook := f.onDial
	f.mu.Unlock()
	if hook != nil {
		hook()
	}
	a, b := net.Pipe()
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		defer b.Close()
		f.serve(b)
	}()
	return a, nil
}

func (f *fakeUpstream) serve(nc net.Conn) {
	be := pgproto3.NewBackend(nc, nc)
	m, err := be.ReceiveStartupMessage()
	if err != nil {
		return
	}
	if cr, ok := m.(*pgproto3.CancelRequest); ok {
		f.mu.Lock()
		f.cancels = append(f.cancels, pgproto3.CancelRequest{ProcessID: cr.ProcessID, SecretKey: append([]byte(nil), cr.SecretKey...)})
		f.mu.Unlock()
		return
	}
	if f.saslMech != nil {
		be.Send(&pgproto3.AuthenticationSASL{AuthMechanisms: f.saslMech})
		if be.Flush() != nil {
			return
		}
		_ = be.SetAuthType(pgproto3.AuthTypeSASL)
		if _, err := be.Receive(); err != nil {
			return
		}
	}
	be.Send(&pgproto3.AuthenticationOk{})
	be.Send(&pgproto3.ParameterStatus{Name: "server_version", Value: "15.0-fake"})
	be.Send(&pgproto3.BackendKeyData{ProcessID: fakePID, SecretKey: []byte(fakeSecret)})
	be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
	if be.Flush() != nil {
		return
	}
	for {
		m, err := be.Receive()
		if err != nil {
			return
		}
		switch m := m.(type) {
		case *pgproto3.Query:
			f.mu.Lock()
			f.queries = append(f.queries, m.String)
			f.mu.Unlock()
			if m.String == f.hang && f.hang != "" {
				if f.hold == nil {
					continue
				}
				<-f.hold
			}
			be.Send(&pgproto3.RowDescription{Fields: []pgproto3.FieldDescription{{Name: []byte("x"), DataTypeOID: 25, DataTypeSize: -1, TypeModifier: -1}}})
			be.Send(&pgproto3.DataRow{Values: [][]byte{[]byte("upstream")}})
			be.Send(&pgproto3.CommandComplete{CommandTag: []byte("SELECT 1")})
			be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
		case *pgproto3.Parse:
			f.mu.Lock()
			f.queries = append(f.queries, m.Query)
			f.mu.Unlock()
			be.Send(&pgproto3.ParseComplete{})
		case *pgproto3.Bind:
			be.Send(&pgproto3.BindComplete{})
		case *pgproto3.Describe:
			be.Send(&pgproto3.NoData{})
		case *pgproto3.Execute:
			be.Send(&pgproto3.CommandComplete{CommandTag: []byte("SELECT 0")})
		case *pgproto3.Close:
			be.Send(&pgproto3.CloseComplete{})
		case *pgproto3.Sync:
			be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
		case *pgproto3.FunctionCall:
			be.Send(&pgproto3.FunctionCallResponse{})
			be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
		case *pgproto3.Terminate:
			return
		}
		if be.Flush() != nil {
			return
		}
	}
}

type pipeProxy struct {
	srv *Server
	l   *pipeListener
	up  *fakeUpstream
}

func startPipeProxy(t testing.TB, up *fakeUpstream, h Handler) *pipeProxy {
	t.Helper()
	return startPipeProxyConfig(t, Config{}, up, h)
}

func startPipeProxyConfig(t testing.TB, cfg Config, up *fakeUpstream, h Handler) *pipeProxy {
	t.Helper()
	cfg.UpstreamSSLMode = "disable"
	srv, err := NewServer(cfg, Options{Handler: h, Dial: up.dial, Version: "unit"})
	require.NoError(t, err)
	l := newPipeListener()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background(), l) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, srv.Shutdown(ctx))
		require.ErrorIs(t, <-done, ErrServerClosed)
		up.wg.Wait()
	})
	return &pipeProxy{srv: srv, l: l, up: up}
}

type pipeClient struct {
	nc net.Conn
	fe *pgproto3.Frontend
}

func (p *pipeProxy) connect(t testing.TB) (*pipeClient, []pgproto3.BackendMessage) {
	t.Helper()
	nc := p.l.dial()
	c := &pipeClient{nc: nc, fe: pgproto3.NewFrontend(nc, nc)}
	c.fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": "u", "database": "d"}})
	require.NoError(t, c.fe.Flush())
	return c, c.until(t, 'Z')
}

// backendKey is the BackendKeyData among a connection's start-up messages.
func backendKey(t testing.TB, startup []pgproto3.BackendMessage) *pgproto3.BackendKeyData {
	t.Helper()
	for _, m := range startup {
		if k, ok := m.(*pgproto3.BackendKeyData); ok {
			return k
		}
	}
	require.FailNow(t, "no BackendKeyData in the start-up messages")
	return nil
}

// until reads messages (copied) through the first of type typ.
func (c *pipeClient) until(t testing.TB, typ byte) []pgproto3.BackendMessage {
	t.Helper()
	var out []pgproto3.BackendMessage
	for {
		_ = c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		m, err := c.fe.Receive()
		require.NoError(t, err)
		b, err := m.Encode(nil)
		require.NoError(t, err)
		out = append(out, m)
		if b[0] == typ {
			return out
		}
		// Re-decode into a fresh value: the flyweight is reused.
		out[len(out)-1] = decodeBackend(t, b)
	}
}

func decodeBackend(t testing.TB, b []byte) pgproto3.BackendMessage {
	fe := pgproto3.NewFrontend(&onceReader{b: b}, io.Discard)
	m, err := fe.Receive()
	require.NoError(t, err)
	return m
}

type onceReader struct{ b []byte }

func (r *onceReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}

func TestSessionRelayAndIntercept(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the server shut down
	var seen SessionInfo
	var mu sync.Mutex
	spy := HandlerFunc(func(_ context.Context, info SessionInfo, _ string) (Statement, error) {
		mu.Lock()
		seen = info
		mu.Unlock()
		return nil, nil
	})
	up := &fakeUpstream{}
	p := startPipeProxy(t, up, Handlers{nil, VersionHandler("v-unit"), spy})
	c, startup := p.connect(t)
	defer c.nc.Close()

	// The client sees the upstream backend's pid with the proxy's own
	// secret; the upstream's secret never leaves the proxy.
	key := backendKey(t, startup)
	require.Equal(t, uint32(fakePID), key.ProcessID)
	require.Len(t, key.SecretKey, len(fakeSecret))
	require.NotEqual(t, []byte(fakeSecret), key.SecretKey)

	c.fe.Send(&pgproto3.Query{String: "select 1"})
	require.NoError(t, c.fe.Flush())
	msgs := c.until(t, 'Z')
	require.Equal(t, "upstream", string(msgs[1].(*pgproto3.DataRow).Values[0]))

	c.fe.Send(&pgproto3.Query{String: " SHOW   Atrium.Version ; "})
	require.NoError(t, c.fe.Flush())
	msgs = c.until(t, 'Z')
	require.Len(t, msgs, 4)
	require.Equal(t, "atrium_version", string(msgs[0].(*pgproto3.RowDescription).Fields[0].Name))
	require.Equal(t, "v-unit", string(msgs[1].(*pgproto3.DataRow).Values[0]))
	require.Equal(t, "SHOW", string(msgs[2].(*pgproto3.CommandComplete).CommandTag))

	// Extended protocol: a virtual unnamed statement between real ones,
	// all before one Sync.
	c.fe.Send(&pgproto3.Parse{Name: "real", Query: "select 2"})
	c.fe.Send(&pgproto3.Parse{Query: "SHOW atrium.version"})
	c.fe.Send(&pgproto3.Bind{ResultFormatCodes: []int16{0}})
	c.fe.Send(&pgproto3.Describe{ObjectType: 'P'})
	c.fe.Send(&pgproto3.Execute{})
	c.fe.Send(&pgproto3.Bind{PreparedStatement: "real"})
	c.fe.Send(&pgproto3.Execute{})
	c.fe.Send(&pgproto3.Sync{})
	require.NoError(t, c.fe.Flush())
	msgs = c.until(t, 'Z')
	var types []byte
	for _, m := range msgs {
		b, _ := m.Encode(nil)
		types = append(types, b[0])
	}
	require.Equal(t, "112TDC2CZ", string(types))

	up.mu.Lock()
	require.Equal(t, []string{"select 1", "select 2"}, up.queries, "the intercepted statements never reached upstream")
	up.mu.Unlock()
	mu.Lock()
	require.Equal(t, "u", seen.User)
	require.Equal(t, "15.0-fake", seen.Params["server_version"])
	mu.Unlock()

	c.fe.Send(&pgproto3.Terminate{})
	require.NoError(t, c.fe.Flush())
	_, err := c.fe.Receive()
	require.Error(t, err)
}

func TestCancelRequest(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	up := &fakeUpstream{hang: "slow", hold: make(chan struct{})}
	p := startPipeProxy(t, up, nil)
	c, startup := p.connect(t)
	defer c.nc.Close()
	key := backendKey(t, startup)
	// cancel sends a CancelRequest and returns once the proxy has closed
	// the connection, which it does after serving the request.
	cancel := func(secret []byte) error {
		cc := p.l.dial()
		defer cc.Close()
		fe := pgproto3.NewFrontend(cc, cc)
		fe.Send(&pgproto3.CancelRequest{ProcessID: key.ProcessID, SecretKey: secret})
		if err := fe.Flush(); err != nil {
			return err
		}
		if _, err := cc.Read(make([]byte, 1)); err == nil {
			return errors.New("the proxy answered a CancelRequest")
		}
		return nil
	}
	counts := func() (dials, cancels int) {
		up.mu.Lock()
		defer up.mu.Unlock()
		return up.dials, len(up.cancels)
	}
	startSlow := func(n int) {
		c.fe.Send(&pgproto3.Query{String: "slow"})
		require.NoError(t, c.fe.Flush())
		require.Eventually(t, func() bool {
			up.mu.Lock()
			defer up.mu.Unlock()
			return len(up.queries) == n
		}, 10*time.Second, time.Millisecond)
	}

	// An idle session owes nothing to cancel: PostgreSQL would ignore the
	// request, and the proxy does not open an upstream connection for it.
	dials, _ := counts()
	require.NoError(t, cancel(key.SecretKey))
	d, n := counts()
	require.Equal(t, dials, d, "upstream dialled for an idle session's cancel")
	require.Zero(t, n)

	// While a query runs, a request with the proxy's key reaches upstream
	// with the upstream's key; a wrong secret does not.
	startSlow(1)
	require.NoError(t, cancel([]byte("wrong!!!")))
	require.NoError(t, cancel(key.SecretKey))
	_, n = counts()
	require.Equal(t, 1, n)
	up.mu.Lock()
	require.Equal(t, uint32(fakePID), up.cancels[0].ProcessID)
	require.Equal(t, fakeSecret, string(up.cancels[0].SecretKey))
	up.mu.Unlock()
	up.hold <- struct{}{}
	c.until(t, 'Z')

	// A request held up on its way upstream until its query has finished
	// is dropped: sent then, it would cancel the client's next statement.
	startSlow(2)
	dialing, release := make(chan struct{}), make(chan struct{})
	up.mu.Lock()
	up.onDial = func() { close(dialing); <-release }
	up.mu.Unlock()
	served := make(chan error, 1)
	go func() { served <- cancel(key.SecretKey) }()
	<-dialing
	up.hold <- struct{}{}
	c.until(t, 'Z')
	c.fe.Send(&pgproto3.Query{String: "select 1"}) // the next statement
	require.NoError(t, c.fe.Flush())
	close(release)
	require.NoError(t, <-served)
	_, n = counts()
	require.Equal(t, 1, n, "a cancel for a finished query was sent upstream")
	msgs := c.until(t, 'Z')
	require.Equal(t, "upstream", string(msgs[1].(*pgproto3.DataRow).Values[0]))
	up.mu.Lock()
	up.onDial = nil
	up.mu.Unlock()

	c.fe.Send(&pgproto3.Terminate{})
	require.NoError(t, c.fe.Flush())
}

func TestSessionStripsChannelBinding(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the server shut down
	up := &fakeUpstream{saslMech: []string{"SCRAM-SHA-256-PLUS", "SCRAM-SHA-256"}}
	p := startPipeProxy(t, up, nil)
	nc := p.l.dial()
	defer nc.Close()
	fe := pgproto3.NewFrontend(nc, nc)
	fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": "u"}})
	require.NoError(t, fe.Flush())
	m, err := fe.Receive()
	require.NoError(t, err)
	require.Equal(t, []string{"SCRAM-SHA-256"}, m.(*pgproto3.AuthenticationSASL).AuthMechanisms)
	// A client that insists on channel binding gets a clear error.
	fe.Send(&pgproto3.SASLInitialResponse{AuthMechanism: "SCRAM-SHA-256-PLUS", Data: []byte("p=tls-server-end-point,,n=,r=abc")})
	require.NoError(t, fe.Flush())
	m, err = fe.Receive()
	require.NoError(t, err)
	e := m.(*pgproto3.ErrorResponse)
	require.Equal(t, "28000", e.Code)
	require.Contains(t, e.Hint, "channel_binding=disable")
}

func TestErrorResponseMapping(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code string
	}{
		{Errorf("42601", "bad"), "42601"},
		{&UpstreamError{Severity: "FATAL", Code: "22012", Message: "division by zero"}, "22012"},
		{context.Canceled, "57014"},
		{context.DeadlineExceeded, "57014"},
		{errors.New("secret internal detail"), "58000"},
	} {
		e := errorResponse(tc.err)
		require.Equal(t, tc.code, e.Code)
		require.Equal(t, "ERROR", e.Severity)
		require.NotContains(t, e.Message, "secret internal detail")
	}
}

func TestIsShowVersion(t *testing.T) {
	for s, want := range map[string]bool{
		"SHOW atrium.version":           true,
		"show atrium.version;":          true,
		"  Show\tATRIUM.VERSION ;  ":    true,
		"SHOW atrium.versions":          false,
		"SHOW server_version":           false,
		"SELECT 1":                      false,
		"SHOW atrium.version; SELECT 1": false,
	} {
		require.Equal(t, want, isShowVersion(s), s)
	}
}

func TestDeque(t *testing.T) {
	var d deque
	for i := range 100 {
		d.push(kind(i%int(numKinds-1) + 1))
		if i%3 == 0 {
			d.pop()
		}
	}
	n := d.len()
	for range n {
		require.NotEqual(t, kNone, d.front())
		d.pop()
	}
	require.Equal(t, kNone, d.front())
}

func TestConfigValidate(t *testing.T) {
	for _, bad := range []Config{
		{Upstream: "nohostport"},
		{UpstreamSSLMode: "allow"},
		{TLSCert: "x"},
		{MaxConnections: -1},
		{MaxMessageSize: 10},
		{IdleTimeout: -time.Second},
		{MaxStartupConnections: -1},
		{StartupPacketTimeout: -time.Second},
	} {
		require.Error(t, bad.Validate(), "%+v", bad)
	}
	var c Config
	require.NoError(t, c.Validate())
	require.Equal(t, DefaultUpstream, c.Upstream)
	require.Equal(t, "prefer", c.UpstreamSSLMode)
	require.Equal(t, DefaultMaxStartupConns, c.MaxStartupConnections)
	require.Equal(t, DefaultStartupPacket, c.StartupPacketTimeout)
	require.Equal(t, DefaultMaxMessageSize, c.MaxMessageSize)
}

// threeRows is a Statement of three text rows.
type threeRows struct{}

func (threeRows) Describe(context.Context, Upstream) ([]pgproto3.FieldDescription, error) {
	return []pgproto3.FieldDescription{{Name: []byte("n"), DataTypeOID: 23, DataTypeSize: 4, TypeModifier: -1}}, nil
}

func (threeRows) Execute(_ context.Context, _ Upstream, w RowWriter) (string, error) {
	for _, v := range []string{"1", "2", "3"} {
		if err := w.Row([][]byte{[]byte(v)}); err != nil {
			return "", err
		}
	}
	return "SELECT 3", nil
}

func TestVirtualPortalSuspension(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	h := HandlerFunc(func(_ context.Context, _ SessionInfo, sql string) (Statement, error) {
		if sql == "three" {
			return threeRows{}, nil
		}
		return nil, nil
	})
	p := startPipeProxy(t, &fakeUpstream{}, h)
	c, _ := p.connect(t)
	defer c.nc.Close()
	c.fe.Send(&pgproto3.Parse{Name: "s", Query: "three"})
	c.fe.Send(&pgproto3.Bind{DestinationPortal: "p", PreparedStatement: "s", ResultFormatCodes: []int16{1}})
	c.fe.Send(&pgproto3.Execute{Portal: "p", MaxRows: 2})
	c.fe.Send(&pgproto3.Execute{Portal: "p", MaxRows: 2})
	c.fe.Send(&pgproto3.Bind{PreparedStatement: "s", Parameters: [][]byte{[]byte("x")}})
	c.fe.Send(&pgproto3.Execute{})
	c.fe.Send(&pgproto3.Sync{})
	require.NoError(t, c.fe.Flush())
	msgs := c.until(t, 'Z')
	var types []byte
	var ints []uint32
	for _, m := range msgs {
		b, _ := m.Encode(nil)
		types = append(types, b[0])
		if d, ok := m.(*pgproto3.DataRow); ok {
			ints = append(ints, binary.BigEndian.Uint32(d.Values[0])) // binary int4, converted
		}
	}
	require.Equal(t, "12DDsDCEZ", string(types))
	require.Equal(t, []uint32{1, 2, 3}, ints)
	require.Equal(t, "08P01", msgs[len(msgs)-2].(*pgproto3.ErrorResponse).Code)
}

// TestCancelRequestAsSessionStarts sends a CancelRequest the moment the
// client has its key, while the session goroutine may still be finishing
// its start-up: the request is served on another connection's goroutine,
// and must touch only what the session shares under a lock (run with
// -race; pgx's conformance suite caught an unsynchronised logger here).
func TestCancelRequestAsSessionStarts(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	up := &fakeUpstream{}
	p := startPipeProxy(t, up, nil)
	for range 20 {
		c, startup := p.connect(t)
		key := backendKey(t, startup)
		cc := p.l.dial()
		fe := pgproto3.NewFrontend(cc, cc)
		fe.Send(&pgproto3.CancelRequest{ProcessID: key.ProcessID, SecretKey: key.SecretKey})
		require.NoError(t, fe.Flush())
		_, err := cc.Read(make([]byte, 1))
		require.Error(t, err, "the proxy answered a CancelRequest")
		cc.Close()
		c.fe.Send(&pgproto3.Query{String: "select 1"})
		require.NoError(t, c.fe.Flush())
		msgs := c.until(t, 'Z')
		require.Equal(t, "upstream", string(msgs[1].(*pgproto3.DataRow).Values[0]))
		c.fe.Send(&pgproto3.Terminate{})
		require.NoError(t, c.fe.Flush())
		c.nc.Close()
	}
}
