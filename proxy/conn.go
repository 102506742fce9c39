package proxy

import (
	"bufio"
	"container/list"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

const ioBufSize = 16 << 10

// conn is one client connection and, after authentication, its session with
// its own upstream connection. The session goroutine (serve → clientLoop)
// owns every field not under mu or marked otherwise; upstreamLoop runs
// concurrently and owns ur and the upstream-side counters.
type conn struct {
	srv     *Server
	id      uint64
	started time.Time
	log     *slog.Logger
	ctx     context.Context // cancelled when the connection ends
	cancel  context.CancelFunc

	nc  net.Conn      // client transport as accepted
	cr  *bufio.Reader // client reader over src: session goroutine only
	src clientSource  // what cr reads: bytes a watcher held, then the transport
	// cw is the client writer. Before the relay starts only the session
	// goroutine uses it; after, every use holds wmu.
	cw  *bufio.Writer
	wmu sync.Mutex

	ur *bufio.Reader // upstreamLoop only (after startup)
	uw *bufio.Writer // session goroutine only

	buf    []byte // session goroutine's scratch
	ubuf   []byte // upstreamLoop's scratch
	encBuf []byte // session goroutine's encode scratch

	user, database, appName string

	// The client's BackendKeyData is the upstream's process id with
	// keySecret, minted by the proxy; upSecret, the upstream's own,
	// never leaves the proxy. All immutable once set.
	upPID     uint32
	keySecret []byte
	upSecret  []byte

	// startingElem is c's place in the server's pre-startup set, nil once
	// the StartupMessage arrived or c was shed; guarded by srv.mu.
	startingElem *list.Element
	admitted     bool // counted in srv.sessions; session goroutine only

	params atomic.Pointer[map[string]string] // copy-on-write ParameterStatus values

	// Session goroutine state of the extended protocol.
	virt     map[string]*vstmt
	vportals map[string]*vportal
	unsynced bool // real extended-protocol messages forwarded since the last Sync
	// unsafeUp: since the last Sync a real Bind or Execute (which open the
	// pipeline's implicit transaction) or an unnamed Parse was forwarded,
	// so a Statement must not run its own statements upstream.
	unsafeUp bool
	discard  bool // skipping client messages until Sync after an error we reported
	cwDirty  bool // the session goroutine wrote to cw since the last flush

	copyIn atomic.Bool // upstream is in COPY FROM STDIN
	// extFailed: the upstream failed an extended-protocol message and skips
	// messages until Sync; cleared at ReadyForQuery.
	extFailed atomic.Bool
	upFatal   atomic.Bool // a FATAL ErrorResponse from upstream was relayed
	leaving   atomic.Bool // the client sent Terminate; upstream EOF is expected
	// clientGone: a clientWatch saw the client close or reset its end.
	clientGone atomic.Bool
	ownCh      chan ownMsg // upstream messages of the proxy's own queries
	upDone     chan struct{}
	// bg holds goroutines the session starts besides upstreamLoop (a
	// CancelRequest sent upstream); serve waits for them before the
	// connection counts as closed.
	bg       sync.WaitGroup
	done     chan struct{} // closed by finish
	finished sync.Once
	reason   EndReason // set by finish, read after done

	authenticated bool
	// in counts client→upstream traffic (written by the session
	// goroutine), out upstream→client (written by upstreamLoop); both are
	// read by Server.Traffic at any time.
	in, out relayCounters

	mu struct {
		sync.Mutex
		client     net.Conn // current client transport (TLS after SSLRequest)
		up         net.Conn // upstream transport once dialled, for finish
		closed     bool     // finish ran: a later upstream is closed at once
		pending    deque    // expected upstream responses, in order
		tx         byte     // last ReadyForQuery status
		idleCh     chan struct{}
		stmtCancel context.CancelFunc
		waiting    bool // session goroutine is blocked waiting for client input
		deadline   bool // a read deadline is set on client
	}
}

// ownMsg is one upstream message for the proxy's own query; body is owned by
// the receiver.
type ownMsg struct {
	typ  byte
	body []byte
}

var errSessionEnded = errors.New("session ended")

func newConn(s *Server, nc net.Conn) *conn {
	c := &conn{srv: s, nc: nc, id: s.nextID.Add(1), started: time.Now(),
		done: make(chan struct{}), upDone: make(chan struct{})}
	c.ctx, c.cancel = context.WithCancel(s.base)
	c.log = s.log.With("conn", c.id, "remote", nc.RemoteAddr().String())
	c.mu.client = nc
	c.mu.tx = 'I'
	return c
}

func (c *conn) serve() {
	reason := EndInternal
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("panic in session; closing it", "panic", r, "stack", string(debug.Stack()))
			reason = EndInternal
		}
		c.finish(reason)
		if c.keySecret != nil {
			c.srv.unregisterKey(c, c.upPID)
		}
		if c.authenticated {
			<-c.upDone
		}
		c.bg.Wait()
		if se, ok := c.srv.handler.(SessionEnder); ok && c.authenticated {
			se.SessionEnded(c.id)
		}
		t := c.traffic()
		st := ConnStats{Reason: c.reason, Authenticated: c.authenticated, Duration: time.Since(c.started),
			BytesIn: t.BytesIn, MessagesIn: t.MessagesIn, BytesOut: t.BytesOut, MessagesOut: t.MessagesOut}
		c.srv.obs.ConnectionClosed(st)
		c.log.Debug("connection closed", "reason", c.reason.String(), "duration", st.Duration,
			"bytes_in", st.BytesIn, "bytes_out", st.BytesOut)
		c.srv.connDone(c)
	}()
	reason = c.run()
}

// finish ends the connection once: it records the first reason, cancels
// the session context and closes both sockets, which unblocks both loops.
func (c *conn) finish(r EndReason) {
	c.finished.Do(func() {
		c.reason = r
		close(c.done)
		c.cancel()
		c.mu.Lock()
		cl, up := c.mu.client, c.mu.up
		c.mu.closed = true
		c.mu.Unlock()
		_ = cl.Close()
		if up != nil {
			_ = up.Close()
		}
	})
}

// attachUpstream records the session's upstream transport so that finish,
// which other goroutines call (Shutdown's forceClose), closes it too. It
// reports false, having closed up, when the connection already ended.
func (c *conn) attachUpstream(up net.Conn) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.closed {
		_ = up.Close()
		return false
	}
	c.mu.up = up
	return true
}

// forceClose is Shutdown's last resort.
func (c *conn) forceClose() { c.finish(EndShutdown) }

// wake interrupts the session goroutine's wait for client input so that it
// re-checks shutdown and idle state.
func (c *conn) wake() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.waiting {
		c.mu.deadline = true
		_ = c.mu.client.SetReadDeadline(time.Now())
	}
}

func (c *conn) setClient(nc net.Conn) {
	c.mu.Lock()
	c.mu.client = nc
	c.mu.Unlock()
	c.src.nc = nc
	c.cr.Reset(&c.src)
	c.cw.Reset(nc)
}

func (c *conn) client() net.Conn {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.client
}

func (c *conn) run() EndReason {
	c.src.nc = c.nc
	c.cr = bufio.NewReaderSize(&c.src, ioBufSize)
	c.cw = bufio.NewWriterSize(c.nc, ioBufSize)
	deadline := c.started.Add(c.srv.cfg.StartupTimeout)
	_ = c.nc.SetDeadline(c.started.Add(min(c.srv.cfg.StartupTimeout, c.srv.cfg.StartupPacketTimeout)))

	sp, reason := c.clientStartup()
	if sp == nil {
		return reason
	}
	if !c.srv.startupReceived(c) {
		return EndStartupShed
	}
	_ = c.client().SetDeadline(deadline)
	if r, ok := c.checkStartup(sp); !ok {
		return r
	}
	t0 := time.Now()
	up, err := c.srv.dialUpstream(c.ctx)
	c.srv.obs.UpstreamConnected(time.Since(t0), err)
	if err != nil {
		c.log.Warn("cannot connect to upstream", "err", err)
		c.sendFatal(fatal(codeUnableToConnect, "atrium could not connect to the upstream PostgreSQL server", ""))
		return EndUpstreamDial
	}
	if !c.attachUpstream(up) { // force-closed while dialling
		return EndShutdown
	}
	_ = up.SetDeadline(deadline)
	c.ur = bufio.NewReaderSize(up, ioBufSize)
	c.uw = bufio.NewWriterSize(up, ioBufSize)
	if _, err := up.Write(sp.encode()); err != nil {
		c.log.Warn("upstream write failed during startup", "err", err)
		c.sendFatal(fatal(codeUnableToConnect, "atrium could not connect to the upstream PostgreSQL server", ""))
		return EndUpstreamDial
	}
	if r, ok := c.authenticate(); !ok {
		return r
	}
	_ = up.SetDeadline(time.Time{})
	_ = c.client().SetDeadline(time.Time{})
	c.authenticated = true
	c.srv.obs.SessionStarted()
	c.log = c.log.With("user", c.user, "database", c.database)
	c.log.Debug("session started")
	return c.relay()
}

// clientStartup reads the client's startup packets: SSLRequest and
// GSSENCRequest (answered here), CancelRequest (served and the connection
// ended), or the StartupMessage, which it returns.
func (c *conn) clientStartup() (*startupPacket, EndReason) {
	sawSSL, sawGSS := false, false
	for {
		body, err := readStartupPacket(c.cr, &c.buf)
		if err != nil {
			return nil, c.startupReadFailed(err, true)
		}
		switch code := binary.BigEndian.Uint32(body); code {
		case sslRequestCode:
			if sawSSL || len(body) != 4 {
				c.sendFatal(fatal(codeProtocolViolation, "unexpected SSLRequest", ""))
				return nil, EndClientError
			}
			sawSSL = true
			if c.srv.serverTLS == nil {
				if !c.writeClientRaw([]byte{'N'}) {
					return nil, EndClientClosed
				}
				continue
			}
			if !c.writeClientRaw([]byte{'S'}) {
				return nil, EndClientClosed
			}
			// Bytes that arrived with the SSLRequest were sent before
			// encryption and could have been injected by a man in the
			// middle (CVE-2021-23222 in libpq, CVE-2021-3935 in
			// PgBouncer): refuse rather than read them as TLS.
			if c.cr.Buffered() > 0 {
				c.sendFatal(&pgproto3.ErrorResponse{Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: codeProtocolViolation,
					Message: "received unencrypted data after SSL request",
					Detail:  "This could be either a client-software bug or evidence of an attempted man-in-the-middle attack."})
				return nil, EndClientError
			}
			tc := tls.Server(c.nc, c.srv.serverTLS)
			if err := tc.HandshakeContext(c.ctx); err != nil {
				c.log.Debug("client tls handshake failed", "err", err)
				return nil, EndClientError
			}
			c.setClient(tc)
		case gssEncRequestCode:
			if sawGSS || len(body) != 4 {
				c.sendFatal(fatal(codeProtocolViolation, "unexpected GSSENCRequest", ""))
				return nil, EndClientError
			}
			sawGSS = true
			if !c.writeClientRaw([]byte{'N'}) {
				return nil, EndClientClosed
			}
		case cancelRequestCode:
			var cr pgproto3.CancelRequest
			if err := cr.Decode(body); err != nil {
				return nil, EndClientError
			}
			if target := c.srv.lookupKey(cr.ProcessID, cr.SecretKey); target != nil {
				target.cancelFromClient(c.log.With("session_conn", target.id))
			}
			return nil, EndCancelRequest
		default:
			if code>>16 != 3 {
				return nil, c.refuseProtocolVersion(body)
			}
			sp, err := parseStartup(body)
			if err != nil {
				c.sendFatal(fatal(codeProtocolViolation, err.Error(), ""))
				return nil, EndClientError
			}
			return sp, 0
		}
	}
}

// refuseProtocolVersion answers a startup packet of a protocol major
// version other than 3 with what the upstream server itself answers, which
// names the versions it supports (3.0 to 3.0 before PostgreSQL 18, 3.0 to
// 3.2 from 18) in the format the client asked for: the packet goes
// upstream as it came and the reply comes back as it is.
func (c *conn) refuseProtocolVersion(body []byte) EndReason {
	up, err := c.srv.dialUpstream(c.ctx)
	if err != nil {
		c.log.Warn("cannot connect to upstream", "err", err)
		c.sendFatal(fatal(codeUnableToConnect, "atrium could not connect to the upstream PostgreSQL server", ""))
		return EndUpstreamDial
	}
	defer up.Close()
	_ = up.SetDeadline(time.Now().Add(c.srv.cfg.ConnectTimeout))
	pkt := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(body)), uint32(4+len(body)))
	if _, err := up.Write(append(pkt, body...)); err != nil {
		c.log.Warn("upstream write failed during startup", "err", err)
		c.sendFatal(fatal(codeUnableToConnect, "atrium could not connect to the upstream PostgreSQL server", ""))
		return EndUpstreamDial
	}
	// The server answers with one error and closes the connection.
	reply, err := io.ReadAll(io.LimitReader(up, maxAuthMessage))
	if len(reply) == 0 {
		c.log.Warn("upstream gave no answer to an unsupported protocol version", "err", err)
		c.sendFatal(fatal(codeFeatureNotSupp, fmt.Sprintf("unsupported frontend protocol %d.%d", binary.BigEndian.Uint16(body), binary.BigEndian.Uint16(body[2:])), ""))
		return EndRefused
	}
	c.writeClientRaw(reply)
	return EndRefused
}

// startupReadFailed ends a connection whose startup read failed.
// preStartup: before the StartupMessage, where PostgreSQL closes the
// socket without a reply (an invalid packet length or a timeout there only
// gets a server log line); clients such as node-postgres treat an
// ErrorResponse there as an uncaught error.
func (c *conn) startupReadFailed(err error, preStartup bool) EndReason {
	var pe *errProtocol
	switch {
	case errors.As(err, &pe) && preStartup:
		c.log.Debug("invalid startup packet; closing without a reply", "err", pe.msg)
		return EndClientError
	case errors.As(err, &pe):
		c.sendFatal(fatal(codeProtocolViolation, pe.msg, ""))
		return EndClientError
	case errors.Is(err, os.ErrDeadlineExceeded):
		if c.srv.draining.Load() {
			return EndShutdown
		}
		if !preStartup {
			c.sendFatal(fatal(codeProtocolViolation, "canceling authentication due to timeout", ""))
		}
		return EndStartupTimeout
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed):
		return EndClientClosed
	default:
		return EndClientError
	}
}

// checkStartup applies the proxy's own admission rules to a StartupMessage.
func (c *conn) checkStartup(sp *startupPacket) (EndReason, bool) {
	if v, ok := sp.params["replication"]; ok {
		switch v {
		case "false", "off", "no", "0":
		default:
			c.sendFatal(fatal(codeFeatureNotSupp, "replication connections are not supported through Atrium",
				"Connect to the PostgreSQL server directly for replication."))
			return EndRefused, false
		}
	}
	c.user = sp.params["user"]
	if c.user == "" {
		c.sendFatal(fatal(codeInvalidAuthSpec, "no PostgreSQL user name specified in startup packet", ""))
		return EndRefused, false
	}
	c.database = sp.params["database"]
	if c.database == "" {
		c.database = c.user
	}
	c.appName = sp.params["application_name"]
	if c.srv.draining.Load() {
		c.sendFatal(fatal("57P03", "the database system is shutting down", ""))
		return EndShutdown, false
	}
	if !c.srv.admitSession() {
		c.sendFatal(fatal(codeTooManyConnections, "sorry, too many clients already", ""))
		return EndRefused, false
	}
	c.admitted = true
	return 0, true
}

// authenticate relays the authentication exchange between client and
// upstream until the upstream's first ReadyForQuery. The client proves its
// identity to the real server; nothing it sends is kept.
func (c *conn) authenticate() (EndReason, bool) {
	for {
		typ, n, err := readHeader(c.ur)
		if err == nil && n > maxAuthMessage {
			err = protocolErrorf("upstream message of %d bytes during startup", n)
		}
		var body []byte
		if err == nil {
			body, err = readBody(c.ur, &c.ubuf, n)
		}
		if err != nil {
			c.log.Warn("upstream failed during startup", "err", err)
			c.sendFatal(fatal(codeConnectionFailure, "the upstream server closed the connection during startup", ""))
			return EndUpstreamClosed, false
		}
		switch typ {
		case 'R':
			if len(body) < 4 {
				c.sendFatal(fatal(codeProtocolViolation, "invalid authentication request from the upstream server", ""))
				return EndUpstreamClosed, false
			}
			switch at := binary.BigEndian.Uint32(body); at {
			case pgproto3.AuthTypeOk, pgproto3.AuthTypeSASLFinal:
				c.relayStartup(typ, body)
			case pgproto3.AuthTypeCleartextPassword, pgproto3.AuthTypeMD5Password, pgproto3.AuthTypeSASLContinue:
				c.relayStartup(typ, body)
				if r, ok := c.relayClientAuth(nil); !ok {
					return r, false
				}
			case pgproto3.AuthTypeSASL:
				var sasl pgproto3.AuthenticationSASL
				if err := sasl.Decode(body); err != nil {
					c.sendFatal(fatal(codeProtocolViolation, "invalid SASL request from the upstream server", ""))
					return EndUpstreamClosed, false
				}
				// Channel binding binds SCRAM to the TLS channel the client
				// sees, which Atrium terminates: never offer -PLUS.
				offeredPlus := slices.Contains(sasl.AuthMechanisms, "SCRAM-SHA-256-PLUS")
				sasl.AuthMechanisms = slices.DeleteFunc(sasl.AuthMechanisms, func(m string) bool { return m == "SCRAM-SHA-256-PLUS" })
				if len(sasl.AuthMechanisms) == 0 {
					c.sendFatal(fatal(codeInvalidAuthSpec, "the upstream server offers only SCRAM with channel binding, which cannot pass through Atrium", ""))
					return EndAuthFailed, false
				}
				c.encBuf, _ = appendMsg(c.encBuf[:0], &sasl)
				_, _ = c.cw.Write(c.encBuf)
				if r, ok := c.relayClientAuth(func(b []byte) *pgproto3.ErrorResponse { return checkSASLInitial(b, offeredPlus) }); !ok {
					return r, false
				}
			default:
				c.sendFatal(fatal(codeFeatureNotSupp,
					fmt.Sprintf("authentication method %d requested by the upstream server is not supported through Atrium", at),
					"Use password, md5 or scram-sha-256 authentication for connections from Atrium."))
				return EndAuthFailed, false
			}
		case 'K':
			var k pgproto3.BackendKeyData
			if err := k.Decode(body); err != nil || len(k.SecretKey) > 256 {
				c.sendFatal(fatal(codeProtocolViolation, "invalid BackendKeyData from the upstream server", ""))
				return EndUpstreamClosed, false
			}
			c.upPID, c.upSecret = k.ProcessID, k.SecretKey
			c.srv.registerKey(c, k.ProcessID, len(k.SecretKey))
			c.encBuf, _ = appendMsg(c.encBuf[:0], &pgproto3.BackendKeyData{ProcessID: c.upPID, SecretKey: c.keySecret})
			_, _ = c.cw.Write(c.encBuf)
		case 'S':
			c.setParam(body)
			c.relayStartup(typ, body)
		case 'v', 'N':
			c.relayStartup(typ, body)
		case 'E':
			c.relayStartup(typ, body)
			_ = c.cw.Flush()
			return EndAuthFailed, false
		case 'Z':
			if len(body) != 1 {
				c.sendFatal(fatal(codeProtocolViolation, "invalid ReadyForQuery from the upstream server", ""))
				return EndUpstreamClosed, false
			}
			c.mu.tx = body[0]
			c.relayStartup(typ, body)
			if err := c.cw.Flush(); err != nil {
				return EndClientClosed, false
			}
			return 0, true
		default:
			c.sendFatal(fatal(codeProtocolViolation, fmt.Sprintf("unexpected message type %q from the upstream server during startup", typ), ""))
			return EndUpstreamClosed, false
		}
	}
}

func checkSASLInitial(b []byte, offeredPlus bool) *pgproto3.ErrorResponse {
	var ir pgproto3.SASLInitialResponse
	if err := ir.Decode(b); err != nil {
		return fatal(codeProtocolViolation, "malformed SASLInitialResponse message", "")
	}
	const hint = "Atrium terminates TLS, so SCRAM channel binding cannot work through it: connect with channel_binding=disable, or connect to Atrium without TLS."
	if ir.AuthMechanism == "SCRAM-SHA-256-PLUS" || len(ir.Data) > 0 && ir.Data[0] == 'p' {
		return fatal(codeInvalidAuthSpec, "SCRAM channel binding is not supported through Atrium", hint)
	}
	if offeredPlus && len(ir.Data) > 0 && ir.Data[0] == 'y' {
		// The client supports channel binding and was told the server
		// does not; the server, which does, would reject this as a
		// downgrade attack with a confusing message.
		return fatal(codeInvalidAuthSpec, "SCRAM channel binding negotiation cannot pass through Atrium while both connections use TLS", hint)
	}
	return nil
}

// relayStartup writes an upstream startup-phase message to the client.
func (c *conn) relayStartup(typ byte, body []byte) {
	_ = writeHeader(c.cw, typ, len(body))
	_, _ = c.cw.Write(body)
}

// relayClientAuth flushes what the client must see, reads its one
// authentication response ('p'), checks it and forwards it upstream. The
// buffer holding it is zeroed afterwards: Atrium keeps no credentials.
func (c *conn) relayClientAuth(check func([]byte) *pgproto3.ErrorResponse) (EndReason, bool) {
	if err := c.cw.Flush(); err != nil {
		return EndClientClosed, false
	}
	typ, n, err := readHeader(c.cr)
	if err != nil {
		return c.startupReadFailed(err, false), false
	}
	if typ != 'p' {
		c.sendFatal(fatal(codeProtocolViolation, fmt.Sprintf("expected password response, got message type %d", typ), ""))
		return EndClientError, false
	}
	if n > maxAuthMessage {
		c.sendFatal(fatal(codeProtocolViolation, "invalid authentication message length", ""))
		return EndClientError, false
	}
	body, err := readBody(c.cr, &c.buf, n)
	if err != nil {
		return c.startupReadFailed(err, false), false
	}
	defer clear(body)
	if check != nil {
		if e := check(body); e != nil {
			c.sendFatal(e)
			return EndAuthFailed, false
		}
	}
	_ = writeHeader(c.uw, 'p', n)
	_, _ = c.uw.Write(body)
	if err := c.uw.Flush(); err != nil {
		c.sendFatal(fatal(codeConnectionFailure, "the upstream server closed the connection during startup", ""))
		return EndUpstreamClosed, false
	}
	return 0, true
}

// setParam records a ParameterStatus body (copy on write, because
// SessionInfo hands the map out).
func (c *conn) setParam(body []byte) {
	var ps pgproto3.ParameterStatus
	if ps.Decode(body) != nil {
		return
	}
	old := c.params.Load()
	m := make(map[string]string, 24)
	if old != nil {
		for k, v := range *old {
			m[k] = v
		}
	}
	m[ps.Name] = ps.Value
	c.params.Store(&m)
}

func (c *conn) sessionInfo() SessionInfo {
	var p map[string]string
	if m := c.params.Load(); m != nil {
		p = *m
	}
	return SessionInfo{ID: c.id, User: c.user, Database: c.database, ApplicationName: c.appName, Params: p, TxStatus: c.txStatus()}
}

func (c *conn) txStatus() byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.tx
}

// writeClientRaw writes and flushes bytes during startup.
func (c *conn) writeClientRaw(b []byte) bool {
	_, _ = c.cw.Write(b)
	return c.cw.Flush() == nil
}

// sendFatal sends e (and anything buffered) to the client, bounded in time
// so that a client that does not read cannot hold the connection open.
func (c *conn) sendFatal(e *pgproto3.ErrorResponse) {
	// The deadline goes on before taking wmu: it also unblocks the relay
	// if it holds wmu while writing to a client that stopped reading.
	_ = c.client().SetWriteDeadline(time.Now().Add(5 * time.Second))
	c.wmu.Lock()
	defer c.wmu.Unlock()
	b, _ := appendMsg(nil, e)
	_, _ = c.cw.Write(b)
	_ = c.cw.Flush()
}

// cancelFromClient serves a CancelRequest naming this session: it cancels a
// running Statement, or else forwards the cancel to the upstream backend.
// It runs on the goroutine of the connection that carried the request, so
// it logs to that connection's log: c.log belongs to c's own goroutine,
// which replaces it once the session starts.
func (c *conn) cancelFromClient(log *slog.Logger) {
	c.mu.Lock()
	cancel := c.mu.stmtCancel
	c.mu.Unlock()
	if cancel != nil {
		cancel()
		return
	}
	c.cancelUpstreamQuery(log)
}

// cancelUpstreamQuery sends a CancelRequest for the work the session
// awaits from upstream now, if any. The request goes on a new upstream
// connection (with TLS, a handshake), which under load takes tens of
// milliseconds more than the client's own request took to reach us.
// PostgreSQL cancels whatever its backend runs when the signal lands, so a
// request that arrives after the work it was meant for has finished would
// cancel the client's next statement instead. It is dropped then, as it is
// when the session awaits nothing (PostgreSQL ignores a cancel for an idle
// backend, and no upstream connection is spent on it).
func (c *conn) cancelUpstreamQuery(log *slog.Logger) {
	if c.upPID == 0 {
		return
	}
	mark, busy := c.outstanding()
	if !busy {
		log.Debug("cancel request for an idle session ignored")
		return
	}
	pending := func() bool { return !c.answered(mark) }
	sent, err := c.srv.cancelUpstream(context.Background(), c.upPID, c.upSecret, pending)
	switch {
	case err != nil:
		log.Warn("cancel request to upstream failed", "err", err)
	case !sent:
		log.Debug("cancel request dropped: the work it was for finished before it could be sent upstream")
	}
}

// relayCounters are one direction's relayed messages and bytes. One
// goroutine adds, Server.Traffic reads concurrently; the padding keeps the
// two directions' counters on separate cache lines so the two relay
// goroutines do not slow each other down.
type relayCounters struct {
	msgs, bytes atomic.Uint64
	_           [48]byte
}

func (r *relayCounters) add(n int) {
	r.msgs.Add(1)
	r.bytes.Add(uint64(n) + 5) // type byte and length word
}

// traffic reads the connection's counters.
func (c *conn) traffic() Traffic {
	return Traffic{
		BytesIn: c.in.bytes.Load(), MessagesIn: c.in.msgs.Load(),
		BytesOut: c.out.bytes.Load(), MessagesOut: c.out.msgs.Load(),
	}
}
