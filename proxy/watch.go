package proxy

import (
	"context"
	"errors"
	"net"
	"os"
	"slices"
	"sync/atomic"
	"time"
)

// While a Statement runs, the session goroutine does not read the client:
// the client's later messages must wait, unread and in order, until the
// Statement has answered. PostgreSQL does not read either, but it notices a
// vanished client through client_connection_check_interval; the proxy must
// notice too, or a killed psql leaves the LLM call, the question's
// BEGIN READ ONLY and its running query upstream until their timeouts.
//
// So a clientWatch reads the client transport for as long as a Statement
// runs. What it reads is held, not interpreted, and handed back to the
// session's reader afterwards (clientSource), so a pipelining client loses
// nothing; end of stream, a reset or a closed socket cancels the Statement's
// context at once. Only Statements pay for it: the relay's hot path reads
// through clientSource, whose held slice is empty then.

// maxWatchHeld bounds what a watch holds of a client that keeps sending
// while a Statement runs. Past it the watch stops reading (such a client is
// evidently alive) and the transport's own buffers apply back-pressure, as
// they would without a watch.
const maxWatchHeld = 1 << 20

// clientSource is the reader under the session's client bufio.Reader: the
// bytes the last watch held, then the client transport. Used by the session
// goroutine only; a running watch owns neither field.
type clientSource struct {
	nc   net.Conn
	held []byte
}

func (s *clientSource) Read(p []byte) (int, error) {
	if len(s.held) == 0 {
		return s.nc.Read(p)
	}
	n := copy(p, s.held)
	s.held = s.held[n:]
	if len(s.held) == 0 {
		s.held = nil // let the watch's buffer go
	}
	return n, nil
}

// clientWatch is one watch of the client while a Statement runs. Its
// goroutine owns held until done is closed.
type clientWatch struct {
	nc   net.Conn
	gone *atomic.Bool // conn.clientGone: set before cancel is called
	done chan struct{}
	held []byte
}

// watchClient starts watching the client; cancel is called when the client
// goes away. The caller (the session goroutine) must call stop before it
// reads the client again.
func (c *conn) watchClient(cancel context.CancelFunc) *clientWatch {
	w := &clientWatch{nc: c.client(), gone: &c.clientGone, done: make(chan struct{}), held: c.src.held}
	c.src.held = nil
	go w.run(cancel)
	return w
}

func (w *clientWatch) run(cancel context.CancelFunc) {
	defer close(w.done)
	for len(w.held) < maxWatchHeld {
		if cap(w.held)-len(w.held) < 512 {
			w.held = slices.Grow(w.held, max(4096, len(w.held)))
		}
		n, err := w.nc.Read(w.held[len(w.held):cap(w.held)])
		w.held = w.held[:len(w.held)+n]
		if err == nil {
			continue
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			// stop's deadline (no other read deadline is set while a
			// Statement runs).
			return
		}
		// EOF, a reset, or the socket closed under us: the client is
		// gone. Bytes it sent before are kept; the session will not need
		// them, but a later read must see the same stream.
		w.gone.Store(true)
		cancel()
		return
	}
}

// stop ends the watch and hands what it read back to the session's reader.
// It reports whether the client went away meanwhile.
func (w *clientWatch) stop(c *conn) bool {
	_ = w.nc.SetReadDeadline(time.Unix(1, 0))
	<-w.done
	_ = w.nc.SetReadDeadline(time.Time{})
	if len(w.held) > 0 {
		c.src.held = w.held
	}
	return w.gone.Load()
}
