package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// vstmt is a virtual prepared statement: a Parse the proxy answered itself.
type vstmt struct {
	st        Statement
	kind      string
	fields    []pgproto3.FieldDescription
	described bool
}

// vportal is a virtual portal: a Bind of a virtual statement.
type vportal struct {
	vs      *vstmt
	formats []int16    // result format codes from Bind
	rows    [][][]byte // rows not handed out yet
	bytes   int        // what rows holds, counted by rowSize
	tag     string
	ran     bool
}

// rowSize is what a held row costs, roughly: its values and their slices.
func rowSize(r [][]byte) int {
	n := 24 + 24*len(r)
	for _, v := range r {
		n += len(v)
	}
	return n
}

// heldBytes is what the session's portals hold.
func (c *conn) heldBytes() int {
	n := 0
	for _, p := range c.vportals {
		n += p.bytes
	}
	return n
}

func kindName(st Statement) string {
	if k, ok := st.(Kinded); ok {
		return k.Kind()
	}
	return "other"
}

// errNotQuiescent says the upstream entered COPY while the session waited
// for it; the message is then relayed instead of intercepted.
var errNotQuiescent = errors.New("upstream is in COPY")

// waitQuiescent makes sure every earlier client message has been answered by
// the upstream and relayed to the client. In an unsynced pipeline it sends
// Flush upstream, which makes the server send its pending responses without
// ending the implicit transaction.
func (c *conn) waitQuiescent() error {
	c.mu.Lock()
	if c.mu.pending.len() == 0 {
		c.mu.Unlock()
		if c.copyIn.Load() {
			return errNotQuiescent
		}
		return nil
	}
	ch := make(chan struct{})
	c.mu.idleCh = ch
	c.mu.Unlock()
	if c.unsynced {
		_ = writeHeader(c.uw, 'H', 0)
	}
	if err := c.uw.Flush(); err != nil {
		c.upstreamFailed(err)
		return errSessionEnded
	}
	select {
	case <-ch:
	case <-c.done:
		return errSessionEnded
	}
	if c.copyIn.Load() {
		return errNotQuiescent
	}
	if c.unsynced && c.extFailed.Load() {
		return errPipelineFailed
	}
	return nil
}

// errPipelineFailed says an earlier message of the current pipeline failed
// upstream: the server skips everything until Sync, and so must the proxy.
var errPipelineFailed = errors.New("pipeline failed upstream")

// afterWait handles a waitQuiescent error for an extended-protocol message:
// skip silently after a failed pipeline, report other conditions.
func (c *conn) afterWait(err error, what string) (EndReason, bool) {
	switch {
	case errors.Is(err, errSessionEnded):
		return c.reason, true
	case errors.Is(err, errPipelineFailed):
		c.discard = true
		return 0, false
	default:
		return c.virtualFail(Errorf(codeProtocolViolation, "%s during COPY", what))
	}
}

// interceptable says whether the Handler may see a statement now.
func (c *conn) interceptable() bool { return !c.copyIn.Load() }

// intercept offers one statement's text, in the client's encoding, to the
// Handler, which always sees UTF-8. Text that needs converting is first
// offered as it came: every question marker is ASCII, which all client
// encodings keep as is, so a statement the Handler leaves alone is relayed
// without a conversion (ordinary SQL in an encoding Atrium cannot convert
// passes untouched), and only a claimed one is converted and offered again.
func (c *conn) intercept(text string) (Statement, error) {
	info := c.sessionInfo()
	enc := info.Params["client_encoding"]
	if passThrough(enc, text) {
		return c.srv.handler.Intercept(c.ctx, info, text)
	}
	if st, err := c.srv.handler.Intercept(c.ctx, info, text); st == nil && err == nil {
		return nil, nil
	}
	sql, err := decodeClientText(enc, text)
	if err != nil {
		return nil, err
	}
	return c.srv.handler.Intercept(c.ctx, info, sql)
}

// parseLen is the body length a Parse decodes from, so that trailing bytes,
// which pgproto3 ignores and the server refuses, are noticed.
func parseLen(p *pgproto3.Parse) int {
	return len(p.Name) + 1 + len(p.Query) + 1 + 2 + 4*len(p.ParameterOIDs)
}

// stmtContext is the context a Statement runs under. It is cancelled by a
// CancelRequest for the session and, through a clientWatch, when the client
// goes away. done must be called, on the session goroutine, when the
// Statement returns: it stops the watch, and when the client went away it
// ends the session (the Statement has put the upstream back by then, so
// closing it loses nothing).
func (c *conn) stmtContext() (context.Context, func()) {
	ctx, cancel := context.WithCancel(c.ctx)
	c.mu.Lock()
	c.mu.stmtCancel = cancel
	c.mu.Unlock()
	w := c.watchClient(cancel)
	return ctx, func() {
		c.mu.Lock()
		c.mu.stmtCancel = nil
		c.mu.Unlock()
		cancel()
		if w.stop(c) {
			c.log.Debug("client went away while a statement ran; statement cancelled")
			c.finish(EndClientClosed)
		}
	}
}

// sessionGone reports how the session ended when a Statement noticed.
func (c *conn) sessionGone() (EndReason, bool) {
	select {
	case <-c.done:
		return c.reason, true
	default:
		return 0, false
	}
}

// onQuery handles a simple Query of n body bytes.
func (c *conn) onQuery(n int) (EndReason, bool) {
	body, err := readBody(c.cr, &c.buf, n)
	if err != nil {
		return c.clientReadFailed(err), true
	}
	if n == 0 || body[n-1] != 0 {
		c.sendFatal(fatal(codeProtocolViolation, "invalid string in message", ""))
		return EndClientError, true
	}
	// A NUL inside the string: PostgreSQL answers 08P01 "invalid message
	// format" and carries on; relaying lets it say so itself.
	if c.interceptable() && bytes.IndexByte(body[:n-1], 0) < 0 {
		st, ierr := c.intercept(string(body[:n-1]))
		if st != nil || ierr != nil {
			switch err := c.waitQuiescent(); {
			case errors.Is(err, errSessionEnded):
				return c.reason, true
			case err == nil:
				c.runSimple(st, ierr)
				return c.sessionGone()
			}
			// In COPY: relay; the server reports the protocol error.
		}
	}
	return c.forwardBody('Q', body, kQuery)
}

// runSimple answers a simple Query with st (or reports ierr), ending with
// ReadyForQuery. The upstream is quiescent.
func (c *conn) runSimple(st Statement, ierr error) {
	start := time.Now()
	kind := "other"
	err := ierr
	if err == nil {
		kind = kindName(st)
		ctx, done := c.stmtContext()
		up := &upstream{c: c, usable: !c.unsafeUp}
		w := &rowSink{c: c, simple: true}
		var fields []pgproto3.FieldDescription
		fields, err = st.Describe(ctx, up)
		if err == nil {
			w.fields = fields
			if fields != nil {
				w.sentDesc = true
				err = c.sendClient(&pgproto3.RowDescription{Fields: fields})
			}
		}
		var tag string
		if err == nil {
			tag, err = st.Execute(ctx, up, w)
		}
		if err == nil {
			err = c.sendClient(&pgproto3.CommandComplete{CommandTag: []byte(tag)})
		}
		done()
	}
	if err != nil {
		c.reportError(err)
	}
	_ = c.sendClient(&pgproto3.ReadyForQuery{TxStatus: c.txStatus()})
	c.srv.obs.Intercepted(kind, time.Since(start), err)
}

// reportError sends err as an ErrorResponse, logging causes the client does
// not see.
func (c *conn) reportError(err error) {
	var we *writeFailed
	if errors.As(err, &we) {
		return // the client is gone; the read side will notice
	}
	e := errorResponse(err)
	if e.Code == codeSystemError {
		c.log.Error("statement failed", "err", err)
	} else {
		c.log.Debug("statement failed", "err", err, "sqlstate", e.Code)
	}
	_ = c.sendClient(e)
}

// onParse handles a Parse of n body bytes.
func (c *conn) onParse(n int) (EndReason, bool) {
	body, err := readBody(c.cr, &c.buf, n)
	if err != nil {
		return c.clientReadFailed(err), true
	}
	var p pgproto3.Parse
	// A malformed Parse (a NUL inside the query, a bad parameter count,
	// trailing bytes) is relayed: the server answers 08P01 and skips to
	// Sync, as it would without the proxy.
	if p.Decode(body) != nil || parseLen(&p) != n {
		c.unsynced, c.unsafeUp = true, true
		return c.forwardBody('P', body, kParse)
	}
	if c.interceptable() {
		st, ierr := c.intercept(p.Query)
		if st != nil || ierr != nil {
			return c.virtualParse(p.Name, st, ierr)
		}
	}
	if _, ok := c.virt[p.Name]; ok {
		if p.Name != "" {
			return c.virtualFail(Errorf(codeDuplicatePStmt, "prepared statement %q already exists", p.Name))
		}
		delete(c.virt, "") // a real unnamed statement replaces the virtual one
	}
	c.unsynced = true
	if p.Name == "" {
		c.unsafeUp = true
	}
	return c.forwardBody('P', body, kParse)
}

func (c *conn) virtualParse(name string, st Statement, ierr error) (EndReason, bool) {
	if ierr != nil {
		c.srv.obs.Intercepted("other", 0, ierr)
		return c.virtualFail(ierr)
	}
	if _, ok := c.virt[name]; ok && name != "" {
		return c.virtualFail(Errorf(codeDuplicatePStmt, "prepared statement %q already exists", name))
	}
	if err := c.waitQuiescent(); err != nil {
		return c.afterWait(err, "Parse")
	}
	if c.virt == nil {
		c.virt = map[string]*vstmt{}
		c.vportals = map[string]*vportal{}
	}
	c.virt[name] = &vstmt{st: st, kind: kindName(st)}
	if err := c.sendClient(&pgproto3.ParseComplete{}); err != nil {
		return EndClientClosed, true
	}
	return 0, false
}

// virtualFail reports err for an extended-protocol message and skips the
// client's messages until Sync, as the server does. When real messages of
// the same pipeline are already upstream, it makes the server fail too
// (a Bind of a statement that cannot exist), so that the implicit
// transaction rolls back instead of committing at Sync.
func (c *conn) virtualFail(err error) (EndReason, bool) {
	switch qerr := c.waitQuiescent(); {
	case errors.Is(qerr, errSessionEnded):
		return c.reason, true
	case errors.Is(qerr, errPipelineFailed):
		c.discard = true // the server already failed this pipeline
		return 0, false
	}
	c.reportError(err)
	c.discard = true
	if c.unsynced {
		var b []byte
		b, _ = (&pgproto3.Bind{PreparedStatement: "atrium: abort pipeline \x01"}).Encode(b)
		c.push(kSwallow)
		if _, werr := c.uw.Write(b); werr != nil {
			c.upstreamFailed(werr)
			return EndUpstreamClosed, true
		}
	}
	return c.sessionGone()
}

// targetsVirtual peeks at a Bind, Describe, Execute or Close to see whether
// it names a virtual statement or portal, without consuming it. A real Bind
// that reuses a virtual portal's name drops the virtual portal.
func (c *conn) targetsVirtual(typ byte, n int) (bool, error) {
	peek, err := c.cr.Peek(min(n, 1024, c.cr.Size()))
	if err != nil {
		return false, unexpectedEOF(err)
	}
	switch typ {
	case 'B':
		names, _, ok := cstrings(peek, 2)
		if !ok {
			return false, nil
		}
		if _, v := c.virt[names[1]]; v {
			return true, nil
		}
		delete(c.vportals, names[0])
		return false, nil
	case 'E':
		names, _, ok := cstrings(peek, 1)
		_, v := c.vportals[names[0]]
		return ok && v, nil
	default: // 'D', 'C'
		// Only subtypes 'S' and 'P' name anything; the server answers
		// any other with 08P01 "invalid DESCRIBE message subtype".
		if len(peek) < 2 || peek[0] != 'S' && peek[0] != 'P' {
			return false, nil
		}
		names, _, ok := cstrings(peek[1:], 1)
		if !ok {
			return false, nil
		}
		if peek[0] == 'S' {
			_, v := c.virt[names[0]]
			return v, nil
		}
		_, v := c.vportals[names[0]]
		return v, nil
	}
}

// onVirtual answers a Bind, Describe, Execute or Close of a virtual
// statement or portal.
func (c *conn) onVirtual(typ byte, n int) (EndReason, bool) {
	body, err := readBody(c.cr, &c.buf, n)
	if err != nil {
		return c.clientReadFailed(err), true
	}
	if err := c.waitQuiescent(); err != nil {
		return c.afterWait(err, "unexpected message")
	}
	var resp error
	switch typ {
	case 'B':
		resp = c.virtualBind(body)
	case 'D':
		resp = c.virtualDescribe(body)
	case 'E':
		resp = c.virtualExecute(body)
	case 'C':
		resp = c.virtualClose(body)
	}
	if resp != nil {
		var we *writeFailed
		if errors.As(resp, &we) {
			return EndClientClosed, true
		}
		if r, gone := c.sessionGone(); gone {
			return r, true
		}
		return c.virtualFail(resp)
	}
	return c.sessionGone()
}

func (c *conn) virtualBind(body []byte) error {
	var b pgproto3.Bind
	if err := b.Decode(body); err != nil {
		return Errorf(codeProtocolViolation, "invalid Bind message")
	}
	vs := c.virt[b.PreparedStatement]
	if len(b.Parameters) > 0 {
		return Errorf(codeProtocolViolation, "bind message supplies %d parameters, but prepared statement %q requires 0", len(b.Parameters), b.PreparedStatement)
	}
	for _, f := range b.ResultFormatCodes {
		if f != 0 && f != 1 {
			return Errorf(codeProtocolViolation, "unsupported format code: %d", f)
		}
	}
	c.vportals[b.DestinationPortal] = &vportal{vs: vs, formats: append([]int16(nil), b.ResultFormatCodes...)}
	return c.sendClient(&pgproto3.BindComplete{})
}

// describe runs the Statement's Describe once.
func (c *conn) describe(vs *vstmt) error {
	if vs.described {
		return nil
	}
	ctx, done := c.stmtContext()
	defer done()
	f, err := vs.st.Describe(ctx, &upstream{c: c, usable: !c.unsafeUp})
	if err != nil {
		return err
	}
	vs.fields, vs.described = f, true
	return nil
}

func (c *conn) virtualDescribe(body []byte) error {
	var d pgproto3.Describe
	if err := d.Decode(body); err != nil {
		return Errorf(codeProtocolViolation, "invalid Describe message")
	}
	var vs *vstmt
	var formats []int16
	if d.ObjectType == 'S' {
		vs = c.virt[d.Name]
	} else {
		p := c.vportals[d.Name]
		vs, formats = p.vs, p.formats
	}
	if err := c.describe(vs); err != nil {
		return err
	}
	var msgs []pgproto3.BackendMessage
	if d.ObjectType == 'S' {
		msgs = append(msgs, &pgproto3.ParameterDescription{})
	}
	if vs.fields == nil {
		msgs = append(msgs, &pgproto3.NoData{})
	} else {
		f := make([]pgproto3.FieldDescription, len(vs.fields))
		copy(f, vs.fields)
		for i := range f {
			f[i].Format = formatOf(formats, i)
		}
		msgs = append(msgs, &pgproto3.RowDescription{Fields: f})
	}
	return c.sendClient(msgs...)
}

func formatOf(formats []int16, i int) int16 {
	switch len(formats) {
	case 0:
		return 0
	case 1:
		return formats[0]
	}
	if i < len(formats) {
		return formats[i]
	}
	return 0
}

func (c *conn) virtualExecute(body []byte) error {
	var e pgproto3.Execute
	if err := e.Decode(body); err != nil {
		return Errorf(codeProtocolViolation, "invalid Execute message")
	}
	p := c.vportals[e.Portal]
	if err := c.describe(p.vs); err != nil {
		return err
	}
	start := time.Now()
	if !p.ran {
		p.ran = true
		ctx, done := c.stmtContext()
		// The first MaxRows rows go straight to the client; only the rest
		// wait for the next Execute.
		w := &rowSink{c: c, fields: p.vs.fields, formats: p.formats, sentDesc: true, buffer: e.MaxRows > 0,
			direct: int(e.MaxRows), room: c.srv.cfg.MaxPortalBuffer - c.heldBytes()}
		tag, err := p.vs.st.Execute(ctx, &upstream{c: c, usable: !c.unsafeUp}, w)
		done()
		c.srv.obs.Intercepted(p.vs.kind, time.Since(start), err)
		if err != nil {
			return err
		}
		p.tag, p.rows, p.bytes = tag, w.rows, w.held
		if len(p.rows) > 0 {
			return c.sendClient(&pgproto3.PortalSuspended{})
		}
		return c.sendClient(&pgproto3.CommandComplete{CommandTag: []byte(tag)})
	}
	// Hand out buffered rows, honouring the row limit.
	w := &rowSink{c: c, fields: p.vs.fields, formats: p.formats, sentDesc: true}
	k := len(p.rows)
	if e.MaxRows > 0 && int(e.MaxRows) < k {
		k = int(e.MaxRows)
	}
	for i, r := range p.rows[:k] {
		if err := w.Row(r); err != nil {
			return err
		}
		p.bytes -= rowSize(r)
		p.rows[i] = nil // handed out: let it go
	}
	p.rows = p.rows[k:]
	if len(p.rows) > 0 {
		return c.sendClient(&pgproto3.PortalSuspended{})
	}
	return c.sendClient(&pgproto3.CommandComplete{CommandTag: []byte(p.tag)})
}

func (c *conn) virtualClose(body []byte) error {
	var cl pgproto3.Close
	if err := cl.Decode(body); err != nil {
		return Errorf(codeProtocolViolation, "invalid Close message")
	}
	if cl.ObjectType == 'S' {
		delete(c.virt, cl.Name)
	} else {
		delete(c.vportals, cl.Name)
	}
	return c.sendClient(&pgproto3.CloseComplete{})
}

// rowSink is the RowWriter the session gives a Statement: it writes
// DataRows to the client, converting values to binary where the client asked,
// or buffers them for a fetch with a row limit.
type rowSink struct {
	c        *conn
	simple   bool
	fields   []pgproto3.FieldDescription
	formats  []int16
	sentDesc bool
	buffer   bool // hold rows past the first direct ones
	direct   int
	rows     [][][]byte
	held     int // bytes of rows, by rowSize
	room     int // most bytes rows may hold
	conv     *converter
}

func (w *rowSink) Notice(n *pgproto3.NoticeResponse) error { return w.c.sendClient(n) }

func (w *rowSink) Fields(f []pgproto3.FieldDescription) error {
	if w.sentDesc {
		if len(f) != len(w.fields) {
			return fmt.Errorf("statement wrote %d columns after describing %d", len(f), len(w.fields))
		}
		return nil
	}
	if !w.simple {
		return fmt.Errorf("statement wrote a row description after describing none")
	}
	w.fields, w.sentDesc = f, true
	return w.c.sendClient(&pgproto3.RowDescription{Fields: f})
}

func (w *rowSink) Row(values [][]byte) error {
	if len(values) != len(w.fields) {
		return fmt.Errorf("statement wrote a row of %d values for %d columns", len(values), len(w.fields))
	}
	if w.buffer && w.direct > 0 {
		w.direct--
	} else if w.buffer {
		if w.held += rowSize(values); w.held > w.room {
			return &Error{Code: codeProgramLimit,
				Message: "result too large to hold for fetching with a row limit",
				Detail:  fmt.Sprintf("Atrium holds at most %d bytes of rows for portals fetched in parts.", w.c.srv.cfg.MaxPortalBuffer),
				Hint:    "Fetch this result without a row limit (fetch size 0), ask for fewer rows, or raise atrium's --max-portal-buffer."}
		}
		r := make([][]byte, len(values))
		for i, v := range values {
			if v != nil {
				r[i] = append([]byte{}, v...)
			}
		}
		w.rows = append(w.rows, r)
		return nil
	}
	vals := values
	if hasBinary(w.formats) {
		if w.conv == nil {
			w.conv = newConverter()
		}
		var err error
		if vals, err = w.conv.toBinary(w.fields, w.formats, values); err != nil {
			return err
		}
	}
	return w.c.sendClient(&pgproto3.DataRow{Values: vals})
}

func hasBinary(formats []int16) bool {
	for _, f := range formats {
		if f == 1 {
			return true
		}
	}
	return false
}
