package proxy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime/debug"
	"time"
	"unsafe"

	"github.com/jackc/pgx/v5/pgproto3"
)

// kind is what an upstream response belongs to. The session records one
// entry per client message that the server answers, in order, so it always
// knows whether the upstream is quiescent and where the next response goes
// (the client, or the proxy's own query).
type kind uint8

const (
	kNone     kind = iota
	kQuery         // simple Query: ends at ReadyForQuery
	kFunc          // FunctionCall: ends at ReadyForQuery
	kSync          // Sync: ends at ReadyForQuery
	kParse         // ends at ParseComplete or ErrorResponse
	kBind          // ends at BindComplete or ErrorResponse
	kDescribe      // ends at RowDescription/NoData or ErrorResponse
	kExecute       // ends at CommandComplete/EmptyQuery/PortalSuspended or ErrorResponse
	kClose         // ends at CloseComplete or ErrorResponse
	kSwallow       // the proxy's pipeline-abort Bind: answered, not relayed
	kOwn           // a Statement's query: routed to ownCh, ends at ReadyForQuery
	numKinds
)

// extended kinds are skipped by the server after an error until Sync.
func (k kind) extended() bool { return k >= kParse && k <= kSwallow }

// completes[k][t] says whether a message of type t ends the response to a
// message of kind k.
var completes = func() (t [numKinds][256]bool) {
	for _, k := range []kind{kQuery, kFunc, kSync, kOwn} {
		t[k]['Z'] = true
	}
	t[kParse]['1'] = true
	t[kBind]['2'] = true
	t[kSwallow]['2'] = true
	t[kDescribe]['T'] = true
	t[kDescribe]['n'] = true
	t[kExecute]['C'] = true
	t[kExecute]['I'] = true
	t[kExecute]['s'] = true
	t[kClose]['3'] = true
	for k := kParse; k <= kSwallow; k++ {
		t[k]['E'] = true
	}
	return t
}()

// deque is a FIFO ring of kinds. pushed counts every entry ever pushed, so
// pushed-size is the number answered.
type deque struct {
	buf        []kind
	head, size int
	pushed     uint64
}

func (d *deque) len() int { return d.size }

func (d *deque) push(k kind) {
	if d.size == len(d.buf) {
		nb := make([]kind, max(16, 2*len(d.buf)))
		for i := range d.size {
			nb[i] = d.buf[(d.head+i)%len(d.buf)]
		}
		d.buf, d.head = nb, 0
	}
	d.buf[(d.head+d.size)%len(d.buf)] = k
	d.size++
	d.pushed++
}

func (d *deque) front() kind {
	if d.size == 0 {
		return kNone
	}
	return d.buf[d.head]
}

func (d *deque) pop() {
	if d.size == 0 {
		return
	}
	d.head = (d.head + 1) % len(d.buf)
	d.size--
}

func (c *conn) push(k kind) {
	c.mu.Lock()
	c.mu.pending.push(k)
	c.mu.Unlock()
}

// outstanding returns a mark for the responses the session awaits now, and
// false when it awaits none.
func (c *conn) outstanding() (mark uint64, busy bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.pending.pushed, c.mu.pending.len() > 0
}

// answered says whether every response awaited at mark has arrived.
func (c *conn) answered(mark uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.pending.pushed-uint64(c.mu.pending.len()) >= mark
}

// complete pops the front entry (and, after an error in the extended
// protocol, every entry the server will skip until Sync) and returns the new
// front. tx is the ReadyForQuery status when the message was one.
func (c *conn) complete(typ byte, tx byte) kind {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := &c.mu.pending
	if typ == 'Z' {
		c.mu.tx = tx
	}
	if typ == 'E' && p.front().extended() {
		c.extFailed.Store(true)
		for p.front().extended() {
			p.pop()
		}
	} else {
		if typ == 'Z' {
			c.extFailed.Store(false)
		}
		p.pop()
	}
	if p.len() == 0 {
		if c.mu.idleCh != nil {
			close(c.mu.idleCh)
			c.mu.idleCh = nil
		}
		if c.mu.tx == 'I' && c.mu.waiting && c.srv.draining.Load() {
			c.mu.deadline = true
			_ = c.mu.client.SetReadDeadline(time.Now())
		}
	}
	return p.front()
}

func (c *conn) front() kind {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.pending.front()
}

// relay runs the session after authentication: this goroutine forwards
// client messages, upstreamLoop forwards upstream messages.
func (c *conn) relay() EndReason {
	c.ownCh = make(chan ownMsg)
	go c.upstreamLoop()
	r := c.clientLoop()
	c.finish(r)
	<-c.upDone
	return c.reason
}

// upstreamLoop forwards upstream messages to the client whole and mostly
// undecoded, flushing when nothing more is buffered, and tracks
// ReadyForQuery, errors and completions to keep the pending FIFO exact.
func (c *conn) upstreamLoop() {
	defer close(c.upDone)
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("panic in upstream relay; closing session", "panic", r, "stack", string(debug.Stack()))
			c.finish(EndInternal)
		}
	}()
	head := kNone
	for {
		if c.ur.Buffered() == 0 {
			c.wmu.Lock()
			err := c.cw.Flush()
			c.wmu.Unlock()
			if err != nil {
				c.finish(EndClientClosed)
				return
			}
		}
		typ, n, frame, err := nextMessage(c.ur)
		if err != nil {
			c.upstreamFailed(err)
			return
		}
		c.out.add(n)
		if head == kNone {
			head = c.front()
		}
		switch {
		case head == kOwn && typ != 'A' && typ != 'S':
			if frame != nil {
				_, _ = c.ur.Discard(5)
			}
			body := make([]byte, n)
			if _, err := io.ReadFull(c.ur, body); err != nil {
				c.upstreamFailed(err)
				return
			}
			if typ == 'Z' && n == 1 {
				// Record the status before the Statement sees the end
				// of its query and reads TxStatus.
				head = c.complete(typ, body[0])
			}
			select {
			case c.ownCh <- ownMsg{typ: typ, body: body}:
			case <-c.done:
				return
			}
			continue
		case head == kSwallow:
			if frame != nil {
				_, _ = c.ur.Discard(len(frame))
			} else if err := discardBody(c.ur, n); err != nil {
				c.upstreamFailed(err)
				return
			}
			if completes[kSwallow][typ] {
				head = c.complete(typ, 0)
			}
			continue
		}
		var tx byte
		switch {
		case frame != nil:
			// The whole message is buffered (the common case): inspect
			// it in place and forward the raw frame.
			if tx, err = c.noteUpstream(typ, frame[5:]); err != nil {
				c.upstreamFailed(err)
				return
			}
			c.wmu.Lock()
			_, err = c.cw.Write(frame)
			c.wmu.Unlock()
			_, _ = c.ur.Discard(len(frame))
			if err != nil {
				c.finish(EndClientClosed)
				return
			}
		case typ == 'Z' || typ == 'E' || typ == 'S':
			body, err := readBody(c.ur, &c.ubuf, n)
			if err != nil {
				c.upstreamFailed(err)
				return
			}
			if tx, err = c.noteUpstream(typ, body); err != nil {
				c.upstreamFailed(err)
				return
			}
			c.wmu.Lock()
			_ = writeHeader(c.cw, typ, n)
			_, err = c.cw.Write(body)
			c.wmu.Unlock()
			if err != nil {
				c.finish(EndClientClosed)
				return
			}
			if cap(c.ubuf) > maxKeptBuf {
				c.ubuf = nil // a rare large ErrorResponse
			}
		default:
			// Larger than the read buffer: stream the body through.
			_, _ = c.noteUpstream(typ, nil)
			c.wmu.Lock()
			if err = writeHeader(c.cw, typ, n); err != nil {
				err = &writeFailed{err: err}
			} else {
				err = copyBody(c.cw, c.ur, n)
			}
			c.wmu.Unlock()
			if err != nil {
				var we *writeFailed
				if errors.As(err, &we) {
					c.finish(EndClientClosed)
				} else {
					c.upstreamFailed(err)
				}
				return
			}
		}
		if typ == 'C' && c.copyIn.Load() {
			c.copyIn.Store(false)
		}
		if completes[head][typ] {
			head = c.complete(typ, tx)
		}
	}
}

// noteUpstream records what an upstream message about to be relayed means
// for the session and returns the transaction status of a ReadyForQuery.
// body is nil only for message types whose body is not inspected.
func (c *conn) noteUpstream(typ byte, body []byte) (tx byte, err error) {
	switch typ {
	case 'Z':
		if len(body) != 1 {
			return 0, protocolErrorf("invalid ReadyForQuery length %d", len(body))
		}
		return body[0], nil
	case 'E':
		c.copyIn.Store(false)
		if isFatal(body) {
			c.upFatal.Store(true)
		}
	case 'S':
		c.setParam(body)
	case 'G':
		c.copyIn.Store(true)
		c.mu.Lock()
		if c.mu.idleCh != nil {
			// A waiter must not wait for a COPY that needs the client's
			// data to finish.
			close(c.mu.idleCh)
			c.mu.idleCh = nil
		}
		c.mu.Unlock()
	}
	return 0, nil
}

// upstreamFailed reports a lost upstream to the client (unless the server
// already said why with a FATAL) and ends the session.
func (c *conn) upstreamFailed(err error) {
	select {
	case <-c.done:
		return // we closed it
	default:
	}
	if c.leaving.Load() {
		c.finish(EndClientClosed)
		return
	}
	if !c.upFatal.Load() {
		c.log.Warn("upstream connection lost", "err", err)
		c.sendFatal(fatal(codeConnectionFailure, "atrium lost the connection to the upstream server", ""))
	}
	c.finish(EndUpstreamClosed)
}

// clientLoop forwards client messages to the upstream, intercepting Query
// and Parse, until the client leaves or the session ends.
func (c *conn) clientLoop() EndReason {
	maxBody := c.srv.cfg.MaxMessageSize
	for {
		if c.cr.Buffered() == 0 {
			if err := c.uw.Flush(); err != nil {
				c.upstreamFailed(err)
				return EndUpstreamClosed
			}
			if c.cwDirty {
				c.cwDirty = false
				if err := c.flushClient(); err != nil {
					return EndClientClosed
				}
			}
			if r, stop := c.waitClient(); stop {
				return r
			}
		}
		typ, n, frame, err := nextMessage(c.cr)
		if err != nil {
			return c.clientReadFailed(err)
		}
		if n > maxBody {
			if frame != nil {
				_, _ = c.cr.Discard(5) // refuseOversized drains the body
			}
			return c.refuseOversized(typ, n, maxBody)
		}
		c.in.add(n)
		if frame != nil {
			if r, stop, done := c.forwardInPlace(typ, frame); done {
				if stop {
					return r
				}
				continue
			}
			_, _ = c.cr.Discard(5) // the paths below read the body only
		}
		if c.discard && typ != 'S' && typ != 'X' {
			if err := discardBody(c.cr, n); err != nil {
				return c.clientReadFailed(err)
			}
			continue
		}
		var r EndReason
		var stop bool
		switch typ {
		case 'Q':
			r, stop = c.onQuery(n)
		case 'P':
			r, stop = c.onParse(n)
		case 'B', 'D', 'E', 'C':
			if len(c.virt) > 0 || len(c.vportals) > 0 {
				virtual, err := c.targetsVirtual(typ, n)
				if err != nil {
					return c.clientReadFailed(err)
				}
				if virtual {
					r, stop = c.onVirtual(typ, n)
					break
				}
			}
			c.unsynced = true
			if typ == 'B' || typ == 'E' {
				c.unsafeUp = true
			}
			r, stop = c.forward(typ, n, kindOf(typ))
		case 'S':
			c.discard = false
			clear(c.vportals)
			c.unsynced = false
			c.unsafeUp = false
			r, stop = c.forward(typ, n, kSync)
		case 'F':
			r, stop = c.forward(typ, n, kFunc)
		case 'H':
			c.cwDirty = true
			r, stop = c.forward(typ, n, kNone)
		case 'd', 'c', 'f':
			r, stop = c.forward(typ, n, kNone)
		case 'X':
			c.leaving.Store(true)
			_, _ = c.forward(typ, n, kNone)
			_ = c.uw.Flush()
			return EndClientClosed
		default:
			c.sendFatal(fatal(codeProtocolViolation, fmt.Sprintf("invalid frontend message type %d", typ), ""))
			c.abandonUpstream()
			return EndClientError
		}
		if stop {
			return r
		}
		// A session keeps its scratch buffers between messages, but not
		// one grown for a rare large Query or Parse (or a large row a
		// Statement sent): idle sessions would hold it for life.
		if cap(c.buf) > maxKeptBuf {
			c.buf = nil
		}
		if cap(c.encBuf) > maxKeptBuf {
			c.encBuf = nil
		}
	}
}

// maxKeptBuf is the largest scratch buffer a session keeps between messages.
const maxKeptBuf = 64 << 10

// refuseOversized ends the session over a client message larger than
// Config.MaxMessageSize: it logs why, sends 54000, and drains the message
// for a while before closing. Closing a socket with unread input resets the
// connection: a client still writing the message (JDBC writes all of it
// before it reads) then fails its write and never reads the error.
func (c *conn) refuseOversized(typ byte, n, limit int) EndReason {
	c.log.Warn("client message over the size limit; closing the session",
		"type", string(rune(typ)), "bytes", n, "limit", limit)
	c.sendFatal(&pgproto3.ErrorResponse{Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: codeProgramLimit,
		Message: fmt.Sprintf("message of %d bytes exceeds the limit of %d bytes", n, limit),
		Hint:    "Raise --max-message-size of atrium (PostgreSQL itself takes up to 1 GB)."})
	c.abandonUpstream()
	nc := c.client()
	if hc, ok := nc.(interface{ CloseWrite() error }); ok {
		_ = hc.CloseWrite()
	}
	_ = nc.SetReadDeadline(time.Now().Add(lingerTimeout))
	_, _ = io.CopyN(io.Discard, c.cr, int64(n))
	return EndClientError
}

// lingerTimeout bounds how long a refused client may keep sending before the
// proxy closes the connection anyway.
const lingerTimeout = 5 * time.Second

// forwardInPlace relays a client message that is wholly in the read buffer
// (frame, header included) as it stands: one copy into the upstream's write
// buffer, no decoding. A Query or Parse is offered to the Handler as a view
// of the buffer, so ordinary SQL is never copied. done is false, and nothing
// consumed, for what needs the general path: a Terminate, an unknown type,
// skipping after an error, a statement the Handler claims, and messages
// that may name a virtual statement or portal.
func (c *conn) forwardInPlace(typ byte, frame []byte) (r EndReason, stop, done bool) {
	if c.discard {
		return 0, false, false
	}
	body := frame[5:]
	var k kind
	switch typ {
	case 'Q':
		// Malformed strings, and text the Handler claims, take onQuery.
		if len(body) == 0 || body[len(body)-1] != 0 {
			return 0, false, false
		}
		sql := body[:len(body)-1]
		if c.interceptable() && bytes.IndexByte(sql, 0) < 0 && c.claims(sql) {
			return 0, false, false
		}
		k = kQuery
	case 'P':
		if len(c.virt) > 0 {
			return 0, false, false
		}
		name, query, ok := parseFields(body)
		if !ok || c.interceptable() && c.claims(query) {
			return 0, false, false
		}
		c.unsynced = true
		if len(name) == 0 {
			c.unsafeUp = true
		}
		k = kParse
	case 'B', 'D', 'E', 'C':
		if len(c.virt) > 0 || len(c.vportals) > 0 {
			return 0, false, false
		}
		c.unsynced = true
		if typ == 'B' || typ == 'E' {
			c.unsafeUp = true
		}
		k = kindOf(typ)
	case 'S':
		clear(c.vportals)
		c.unsynced = false
		c.unsafeUp = false
		k = kSync
	case 'F':
		k = kFunc
	case 'H':
		c.cwDirty = true
	case 'd', 'c', 'f':
	default:
		return 0, false, false
	}
	if k != kNone {
		c.push(k)
	}
	_, err := c.uw.Write(frame)
	_, _ = c.cr.Discard(len(frame))
	if err != nil {
		c.upstreamFailed(err)
		return EndUpstreamClosed, true, true
	}
	return 0, false, true
}

// claims says whether the Handler takes over the statement text sql, which
// it sees as a view of the read buffer, valid only during the call (see
// Handler: a Handler that claims it is asked again with a copy it may keep).
func (c *conn) claims(sql []byte) bool {
	st, err := c.intercept(unsafe.String(unsafe.SliceData(sql), len(sql)))
	return st != nil || err != nil
}

func kindOf(typ byte) kind {
	switch typ {
	case 'B':
		return kBind
	case 'D':
		return kDescribe
	case 'E':
		return kExecute
	case 'C':
		return kClose
	}
	return kNone
}

// forward relays one client message of n body bytes upstream, recording
// that a response is due when k is not kNone.
func (c *conn) forward(typ byte, n int, k kind) (EndReason, bool) {
	if k != kNone {
		c.push(k)
	}
	if err := writeHeader(c.uw, typ, n); err != nil {
		c.upstreamFailed(err)
		return EndUpstreamClosed, true
	}
	if err := copyBody(c.uw, c.cr, n); err != nil {
		var we *writeFailed
		if errors.As(err, &we) { // the write side, here the upstream
			c.upstreamFailed(err)
			return EndUpstreamClosed, true
		}
		return c.clientReadFailed(err), true
	}
	return 0, false
}

// forwardBody relays a message whose body was already read.
func (c *conn) forwardBody(typ byte, body []byte, k kind) (EndReason, bool) {
	if k != kNone {
		c.push(k)
	}
	_ = writeHeader(c.uw, typ, len(body))
	if _, err := c.uw.Write(body); err != nil {
		c.upstreamFailed(err)
		return EndUpstreamClosed, true
	}
	return 0, false
}

func (c *conn) clientReadFailed(err error) EndReason {
	var pe *errProtocol
	if errors.As(err, &pe) {
		c.sendFatal(fatal(codeProtocolViolation, pe.msg, ""))
		c.abandonUpstream()
		return EndClientError
	}
	select {
	case <-c.done:
		return c.reason
	default:
	}
	c.abandonUpstream()
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) {
		return EndClientClosed
	}
	c.log.Debug("client read failed", "err", err)
	return EndClientError
}

// abandonUpstream is called when the client goes away: a query still
// running upstream is cancelled, since the server would otherwise run it to
// the end before noticing the closed socket.
func (c *conn) abandonUpstream() {
	c.cancelUpstreamQuery(c.log)
}

// waitClient blocks until client input is available, enforcing the idle
// timeout and closing the session when the proxy drains and the session is
// idle outside a transaction.
func (c *conn) waitClient() (EndReason, bool) {
	idle := c.srv.cfg.IdleTimeout
	last := time.Now()
	for {
		c.mu.Lock()
		c.mu.waiting = true
		quiet := c.mu.pending.len() == 0 && !c.copyIn.Load()
		shut := c.srv.draining.Load() && quiet && c.mu.tx == 'I'
		if idle > 0 && !shut {
			c.mu.deadline = true
			_ = c.mu.client.SetReadDeadline(last.Add(idle))
		}
		c.mu.Unlock()
		if shut {
			c.sendFatal(fatal(codeAdminShutdown, "terminating connection due to administrator command", ""))
			return EndShutdown, true
		}
		_, err := c.cr.Peek(1)
		c.mu.Lock()
		c.mu.waiting = false
		if c.mu.deadline {
			c.mu.deadline = false
			_ = c.mu.client.SetReadDeadline(time.Time{})
		}
		quiet = c.mu.pending.len() == 0 && !c.copyIn.Load()
		c.mu.Unlock()
		if err == nil {
			return 0, false
		}
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			return c.clientReadFailed(err), true
		}
		if idle > 0 && quiet && time.Since(last) >= idle {
			c.sendFatal(fatal(codeIdleSessionTimeout, "terminating connection due to idle-session timeout", ""))
			return EndIdleTimeout, true
		}
		if !quiet {
			last = time.Now() // a running query is not idleness
		}
	}
}

// flushClient flushes what the session goroutine wrote to the client.
func (c *conn) flushClient() error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.cw.Flush()
}

// sendClient encodes msgs to the client (buffered).
func (c *conn) sendClient(msgs ...pgproto3.BackendMessage) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.cwDirty = true
	for _, m := range msgs {
		var err error
		c.encBuf, err = appendMsg(c.encBuf[:0], m)
		if err != nil {
			return err
		}
		if _, err := c.cw.Write(c.encBuf); err != nil {
			return &writeFailed{err: err}
		}
	}
	return nil
}
