package proxy

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// upstream implements Upstream on a session's own upstream connection. The
// session goroutine writes requests to uw; upstreamLoop routes the responses
// (everything but NotificationResponse and ParameterStatus, which still go to
// the client) to ownCh while a kOwn entry is at the front of the FIFO.
type upstream struct {
	c      *conn
	usable bool
}

var _ Upstream = (*upstream)(nil)

func (u *upstream) TxStatus() byte { return u.c.txStatus() }

func (u *upstream) begin(msgs ...pgproto3.FrontendMessage) error {
	if !u.usable {
		return &Error{Code: codeFeatureNotSupp,
			Message: "atrium cannot answer this statement inside a pipeline behind other statements",
			Hint:    "Send Sync before this statement, or run it on its own.", Err: ErrUpstreamBusy}
	}
	if _, gone := u.c.sessionGone(); gone {
		return errSessionEnded
	}
	c := u.c
	if err := c.toClientEncoding(msgs); err != nil {
		return err
	}
	c.push(kOwn)
	var b []byte
	for _, m := range msgs {
		var err error
		if b, err = m.Encode(b); err != nil {
			// Nothing was sent; the entry must still be answered, so
			// send a Sync that yields exactly one ReadyForQuery.
			b, _ = (&pgproto3.Sync{}).Encode(b[:0])
			_, _ = c.uw.Write(b)
			_ = c.uw.Flush()
			return &Error{Code: "22021", Message: "invalid statement text", Err: err}
		}
	}
	if _, err := c.uw.Write(b); err != nil {
		c.upstreamFailed(err)
		return errSessionEnded
	}
	if err := c.uw.Flush(); err != nil {
		c.upstreamFailed(err)
		return errSessionEnded
	}
	return nil
}

// toClientEncoding converts the text of a Statement's own messages from
// UTF-8 to the session's client_encoding, which the server reads them in.
func (c *conn) toClientEncoding(msgs []pgproto3.FrontendMessage) error {
	enc := c.sessionInfo().Params["client_encoding"]
	if enc == "UTF8" {
		return nil
	}
	conv := func(s *string) error {
		out, err := encodeClientText(enc, *s)
		*s = out
		return err
	}
	for _, m := range msgs {
		var err error
		switch m := m.(type) {
		case *pgproto3.Query:
			err = conv(&m.String)
		case *pgproto3.Parse:
			err = conv(&m.Query)
		case *pgproto3.Bind:
			// A new slice: the values belong to the Statement.
			ps := make([][]byte, len(m.Parameters))
			for i, p := range m.Parameters {
				if p == nil {
					continue
				}
				s := string(p)
				if err = conv(&s); err != nil {
					break
				}
				ps[i] = []byte(s)
			}
			m.Parameters = ps
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// receiver reads the responses of one own request; after ctx ends it sends
// one CancelRequest upstream and keeps reading to ReadyForQuery, so the
// connection stays in step.
type receiver struct {
	c         *conn
	ctx       context.Context
	cancelled bool
	grace     *time.Timer // armed once the client is gone
}

// cancelUpstreamAsync sends a CancelRequest for the upstream backend
// without blocking the session goroutine, which keeps reading the
// responses that the cancel cuts short. The goroutine belongs to the
// session: serve waits for it (at most ConnectTimeout) before the
// connection counts as closed.
func (c *conn) cancelUpstreamAsync() {
	c.bg.Add(1)
	go func() {
		defer c.bg.Done()
		c.cancelUpstreamQuery(c.log)
	}()
}

func (r *receiver) next() (ownMsg, error) {
	for {
		var done <-chan struct{}
		if !r.cancelled {
			done = r.ctx.Done()
		}
		var grace <-chan time.Time
		if r.c.clientGone.Load() {
			// Nobody waits for the answer any more: give the server a
			// while to honour the cancel (so the Statement can roll back
			// cleanly), then close the session rather than wait on an
			// upstream that does not answer.
			if r.grace == nil {
				r.grace = time.NewTimer(goneGrace)
			}
			grace = r.grace.C
		}
		select {
		case m := <-r.c.ownCh:
			return m, nil
		case <-done:
			r.cancelled = true
			r.c.cancelUpstreamAsync()
		case <-grace:
			r.c.log.Warn("upstream did not answer after the client went away; closing the session")
			r.c.finish(EndClientClosed)
		case <-r.c.done:
			return ownMsg{}, errSessionEnded
		}
	}
}

// goneGrace is how long a Statement's request may still wait for the
// upstream after the client went away.
const goneGrace = 10 * time.Second

// collect runs the receive loop of one request the proxy sent upstream
// for a Statement. It keeps the first server error, passes notices to
// notice, fails a COPY FROM STDIN (a Statement has no data to send), and
// hands every other message to handle until ReadyForQuery. After an error
// from handle or notice the remaining messages are only drained. It returns
// the first of: the server's error, the handler's error, the cancellation.
func (u *upstream) collect(ctx context.Context, notice func(*pgproto3.NoticeResponse) error, handle func(ownMsg) error) error {
	r := receiver{c: u.c, ctx: ctx}
	defer func() {
		if r.grace != nil {
			r.grace.Stop()
		}
	}()
	var qerr, herr error
	for {
		m, err := r.next()
		if err != nil {
			return err
		}
		switch m.typ {
		case 'E':
			var er pgproto3.ErrorResponse
			_ = er.Decode(m.body)
			if qerr == nil {
				qerr = upstreamErrorFrom(&er)
			}
		case 'N':
			var nr pgproto3.NoticeResponse
			if nr.Decode(m.body) == nil && herr == nil {
				herr = notice(&nr)
			}
		case 'G':
			b, _ := (&pgproto3.CopyFail{Message: "COPY FROM STDIN is not supported in statements run by Atrium"}).Encode(nil)
			_, _ = u.c.uw.Write(b)
			_ = u.c.uw.Flush()
		case 'Z':
			switch {
			case qerr != nil:
				return qerr
			case herr != nil:
				return herr
			case r.cancelled:
				return ctx.Err()
			}
			return nil
		default:
			if herr == nil {
				herr = handle(m)
			}
		}
	}
}

// toClient relays a notice of the proxy's own query to the client, as the
// server would have; a client that cannot take it fails on its next read.
func (u *upstream) toClient(n *pgproto3.NoticeResponse) error {
	_ = u.c.sendClient(n)
	return nil
}

// Query implements Upstream.
func (u *upstream) Query(ctx context.Context, sql string) (*Result, error) {
	if err := u.begin(&pgproto3.Query{String: sql}); err != nil {
		return nil, err
	}
	var cur, last *Result
	err := u.collect(ctx, u.toClient, func(m ownMsg) error {
		switch m.typ {
		case 'T':
			var rd pgproto3.RowDescription
			if err := rd.Decode(m.body); err != nil {
				return fmt.Errorf("decode row description: %w", err)
			}
			cur = &Result{Fields: rd.Fields}
		case 'D':
			var dr pgproto3.DataRow
			if err := dr.Decode(m.body); err != nil || cur == nil {
				return fmt.Errorf("unexpected data row")
			}
			cur.Rows = append(cur.Rows, dr.Values) // m.body is ours alone
		case 'C':
			var cc pgproto3.CommandComplete
			_ = cc.Decode(m.body)
			if cur == nil {
				cur = &Result{}
			}
			cur.CommandTag = string(cc.CommandTag)
			if last == nil || last.Fields == nil || cur.Fields != nil {
				last = cur
			}
			cur = nil
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if last == nil {
		last = &Result{}
	}
	return last, nil
}

// Stream implements Upstream.
func (u *upstream) Stream(ctx context.Context, sql string, limit int, w RowWriter, params ...[]byte) (string, bool, error) {
	maxRows := uint32(0)
	if limit > 0 {
		maxRows = uint32(limit)
	}
	err := u.begin(
		&pgproto3.Parse{Query: sql},
		&pgproto3.Bind{Parameters: params, ResultFormatCodes: []int16{0}},
		&pgproto3.Describe{ObjectType: 'P'},
		&pgproto3.Execute{MaxRows: maxRows},
		&pgproto3.Sync{},
	)
	if err != nil {
		return "", false, err
	}
	var tag string
	var truncated bool
	rows := 0
	err = u.collect(ctx, w.Notice, func(m ownMsg) error {
		switch m.typ {
		case 'T':
			var rd pgproto3.RowDescription
			if err := rd.Decode(m.body); err != nil {
				return fmt.Errorf("decode row description: %w", err)
			}
			return w.Fields(rd.Fields)
		case 'D':
			rows++
			var dr pgproto3.DataRow
			if err := dr.Decode(m.body); err != nil {
				return fmt.Errorf("decode data row: %w", err)
			}
			return w.Row(dr.Values)
		case 'C':
			var cc pgproto3.CommandComplete
			_ = cc.Decode(m.body)
			tag = string(cc.CommandTag)
		case 's':
			truncated = true
			tag = fmt.Sprintf("SELECT %d", rows)
		}
		return nil
	})
	if err != nil {
		return "", false, err
	}
	return tag, truncated, nil
}

// Describe implements Upstream.
func (u *upstream) Describe(ctx context.Context, sql string) ([]pgproto3.FieldDescription, error) {
	if err := u.begin(&pgproto3.Parse{Query: sql}, &pgproto3.Describe{ObjectType: 'S'}, &pgproto3.Sync{}); err != nil {
		return nil, err
	}
	var fields []pgproto3.FieldDescription
	err := u.collect(ctx, u.toClient, func(m ownMsg) error {
		// ParseComplete ('1'), ParameterDescription ('t') and NoData ('n')
		// carry nothing the caller needs.
		if m.typ != 'T' {
			return nil
		}
		var rd pgproto3.RowDescription
		if err := rd.Decode(m.body); err != nil {
			return fmt.Errorf("decode row description: %w", err)
		}
		fields = rd.Fields // m.body is ours alone
		return nil
	})
	if err != nil {
		return nil, err
	}
	return fields, nil
}
