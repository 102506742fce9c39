package proxy

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5/pgproto3"
)

// The relay frames messages itself (a 1-byte type and a 4-byte length, as in
// https://www.postgresql.org/docs/current/protocol-overview.html) so that it
// can forward a message without decoding or copying it; pgproto3 decodes and
// encodes the few messages the proxy looks into or makes.

const (
	maxStartupPacket = 10000 // MAX_STARTUP_PACKET_LENGTH in PostgreSQL
	minStartupPacket = 8     // length word + version code

	sslRequestCode    = 80877103
	gssEncRequestCode = 80877104
	cancelRequestCode = 80877102

	// maxAuthMessage bounds a message exchanged during authentication
	// (PG_MAX_AUTH_TOKEN_LENGTH in PostgreSQL is 65535).
	maxAuthMessage = 1 << 16
)

// errTooLarge reports a message over the configured cap.
type errTooLarge struct{ size, max int }

func (e *errTooLarge) Error() string {
	return fmt.Sprintf("message of %d bytes exceeds the limit of %d bytes", e.size, e.max)
}

// errProtocol reports a malformed message.
type errProtocol struct{ msg string }

func (e *errProtocol) Error() string { return e.msg }

func protocolErrorf(format string, args ...any) error {
	return &errProtocol{msg: fmt.Sprintf(format, args...)}
}

// readHeader reads a message's type and body length without copying.
func readHeader(r *bufio.Reader) (typ byte, n int, err error) {
	h, err := r.Peek(5)
	if err != nil {
		if errors.Is(err, io.EOF) && len(h) > 0 {
			err = io.ErrUnexpectedEOF
		}
		return 0, 0, err
	}
	typ = h[0]
	l := int32(binary.BigEndian.Uint32(h[1:]))
	_, _ = r.Discard(5)
	if l < 4 {
		return typ, 0, protocolErrorf("invalid message length %d for message type %q", l, typ)
	}
	return typ, int(l) - 4, nil
}

// readBody reads n bytes into buf (grown as needed) and returns the body.
func readBody(r *bufio.Reader, buf *[]byte, n int) ([]byte, error) {
	if cap(*buf) < n {
		*buf = make([]byte, n, n+n/4)
	}
	b := (*buf)[:n]
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, unexpectedEOF(err)
	}
	return b, nil
}

// copyBody streams n body bytes from r to w without an intermediate copy.
func copyBody(w *bufio.Writer, r *bufio.Reader, n int) error {
	for n > 0 {
		if r.Buffered() == 0 {
			if _, err := r.Peek(1); err != nil {
				return unexpectedEOF(err)
			}
		}
		k := min(n, r.Buffered())
		b, _ := r.Peek(k)
		if _, err := w.Write(b); err != nil {
			return &writeFailed{err: err}
		}
		_, _ = r.Discard(k)
		n -= k
	}
	return nil
}

// discardBody skips n bytes.
func discardBody(r *bufio.Reader, n int) error {
	_, err := r.Discard(n)
	return unexpectedEOF(err)
}

// nextMessage reads the next message's header. When the whole message is
// already in r's buffer it consumes nothing and returns the message (header
// included) as frame, which stays valid until r is next read or discarded:
// the relay inspects and forwards such a message in place, with its one copy
// into the other side's write buffer. Otherwise it consumes the header and
// frame is nil, as readHeader does.
func nextMessage(r *bufio.Reader) (typ byte, n int, frame []byte, err error) {
	h, err := r.Peek(5)
	if err != nil {
		if errors.Is(err, io.EOF) && len(h) > 0 {
			err = io.ErrUnexpectedEOF
		}
		return 0, 0, nil, err
	}
	typ = h[0]
	l := int32(binary.BigEndian.Uint32(h[1:]))
	if l < 4 {
		_, _ = r.Discard(5)
		return typ, 0, nil, protocolErrorf("invalid message length %d for message type %q", l, typ)
	}
	n = int(l) - 4
	if r.Buffered() >= 5+n {
		frame, _ = r.Peek(5 + n)
		return typ, n, frame, nil
	}
	_, _ = r.Discard(5)
	return typ, n, nil, nil
}

// writeHeader encodes a message header straight into w's buffer: a header
// passed to Write as a slice of a local array would escape to the heap,
// one allocation per relayed message.
func writeHeader(w *bufio.Writer, typ byte, n int) error {
	if w.Available() < 5 {
		if err := w.Flush(); err != nil {
			return err
		}
	}
	h := append(w.AvailableBuffer(), typ, 0, 0, 0, 0)
	binary.BigEndian.PutUint32(h[1:], uint32(n+4))
	_, err := w.Write(h)
	return err
}

// parseFields splits a Parse body into the statement name and query text,
// as views of body, and checks the parameter type list that follows; ok is
// false when the body is malformed, trailing bytes included (onParse then
// relays it for the server to refuse, as it would without the proxy).
func parseFields(body []byte) (name, query []byte, ok bool) {
	k := bytes.IndexByte(body, 0)
	if k < 0 {
		return nil, nil, false
	}
	name, body = body[:k], body[k+1:]
	k = bytes.IndexByte(body, 0)
	if k < 0 {
		return nil, nil, false
	}
	query, body = body[:k], body[k+1:]
	if len(body) < 2 || len(body)-2 != 4*int(binary.BigEndian.Uint16(body)) {
		return nil, nil, false
	}
	return name, query, true
}

func unexpectedEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// readStartupPacket reads one length-prefixed startup-phase packet (startup
// message, SSLRequest, GSSENCRequest or CancelRequest) and returns its body,
// which starts with the 4-byte code.
func readStartupPacket(r *bufio.Reader, buf *[]byte) ([]byte, error) {
	h, err := r.Peek(4)
	if err != nil {
		return nil, err
	}
	l := int32(binary.BigEndian.Uint32(h))
	if l < minStartupPacket || l > maxStartupPacket {
		return nil, protocolErrorf("invalid length of startup packet: %d", l)
	}
	_, _ = r.Discard(4)
	return readBody(r, buf, int(l)-4)
}

// errLayout is PostgreSQL's one message for every malformed parameter list.
var errLayout = protocolErrorf("invalid startup packet layout: expected terminator as last byte")

// startupPacket is a parsed protocol 3.x StartupMessage.
type startupPacket struct {
	major, minor uint16
	params       map[string]string
	order        []string // parameter names in the client's order
}

// parseStartup parses a StartupMessage body (after the length word). It
// accepts any 3.x minor version, because the upstream negotiates minor
// versions with NegotiateProtocolVersion; pgproto3.StartupMessage only
// accepts 3.0 and 3.2.
func parseStartup(body []byte) (*startupPacket, error) {
	if len(body) < 4 {
		return nil, protocolErrorf("startup packet too short")
	}
	v := binary.BigEndian.Uint32(body)
	p := &startupPacket{major: uint16(v >> 16), minor: uint16(v), params: map[string]string{}}
	if p.major != 3 {
		return p, nil
	}
	rest := body[4:]
	for {
		if len(rest) == 0 {
			return nil, errLayout
		}
		if rest[0] == 0 {
			if len(rest) != 1 {
				return nil, errLayout
			}
			return p, nil
		}
		k := bytes.IndexByte(rest, 0)
		if k < 0 {
			return nil, errLayout
		}
		name := string(rest[:k])
		rest = rest[k+1:]
		k = bytes.IndexByte(rest, 0)
		if k < 0 {
			return nil, errLayout
		}
		if _, dup := p.params[name]; !dup {
			p.order = append(p.order, name)
		}
		p.params[name] = string(rest[:k])
		rest = rest[k+1:]
	}
}

// encode rebuilds the startup packet (length word included).
func (p *startupPacket) encode() []byte {
	b := make([]byte, 8, 64)
	binary.BigEndian.PutUint32(b[4:], uint32(p.major)<<16|uint32(p.minor))
	for _, k := range p.order {
		b = append(b, k...)
		b = append(b, 0)
		b = append(b, p.params[k]...)
		b = append(b, 0)
	}
	b = append(b, 0)
	binary.BigEndian.PutUint32(b, uint32(len(b)))
	return b
}

// cstrings splits the leading NUL-terminated strings of b; ok is false when
// b does not hold n of them.
func cstrings(b []byte, n int) (out [2]string, rest []byte, ok bool) {
	for i := range n {
		k := bytes.IndexByte(b, 0)
		if k < 0 {
			return out, nil, false
		}
		out[i] = string(b[:k])
		b = b[k+1:]
	}
	return out, b, true
}

// isFatal reports whether an ErrorResponse body has severity FATAL or PANIC.
func isFatal(body []byte) bool {
	for len(body) > 1 {
		f := body[0]
		k := bytes.IndexByte(body[1:], 0)
		if k < 0 {
			return false
		}
		v := body[1 : 1+k]
		if f == 'V' || f == 'S' {
			return string(v) == "FATAL" || string(v) == "PANIC"
		}
		body = body[k+2:]
	}
	return false
}

// appendMsg encodes m onto dst; encoding errors come only from values the
// proxy built itself, so they are reported as internal errors.
func appendMsg(dst []byte, m pgproto3.BackendMessage) ([]byte, error) {
	b, err := m.Encode(dst)
	if err != nil {
		return dst, fmt.Errorf("encode %T: %w", m, err)
	}
	return b, nil
}

// writeFailed marks an error of the writing side in copyBody, so callers
// can tell which end of a relay failed.
type writeFailed struct{ err error }

func (e *writeFailed) Error() string { return "write: " + e.err.Error() }

func (e *writeFailed) Unwrap() error { return e.err }
