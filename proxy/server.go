package proxy

import (
	"container/list"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Server accepts PostgreSQL clients and proxies each to its own upstream
// connection. Create one with NewServer; its methods are safe for concurrent
// use.
type Server struct {
	cfg       Config
	log       *slog.Logger
	handler   Handler
	obs       Observer
	dial      func(ctx context.Context, network, addr string) (net.Conn, error)
	serverTLS *tls.Config
	upTLS     *tls.Config

	nextID atomic.Uint64
	live   atomic.Int64 // accepted connections not yet closed
	// sessions counts connections admitted past their StartupMessage, the
	// ones MaxConnections bounds.
	sessions atomic.Int64
	draining atomic.Bool

	// base is the parent of every session's context; killAll cancels it
	// when Shutdown's grace period ends.
	base    context.Context
	killAll context.CancelFunc

	mu struct {
		sync.Mutex
		listeners map[net.Listener]struct{}
		conns     map[*conn]struct{}
		ended     Traffic // traffic of connections no longer in conns
		// keys maps an upstream backend's process id, which is also the
		// one its client sees, to the sessions using it: more than one only
		// while the session of a backend that died winds down and
		// PostgreSQL has already reused the pid.
		keys map[uint32][]*conn
		// starting holds the connections that have not sent their
		// StartupMessage yet, oldest first (MaxStartupConnections).
		starting list.List
		closed   bool
	}
	wg sync.WaitGroup // connection goroutines
}

// NewServer validates cfg (filling defaults) and builds a Server.
func NewServer(cfg Config, opts Options) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	stls, err := cfg.serverTLS()
	if err != nil {
		return nil, err
	}
	utls, err := cfg.upstreamTLS()
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: opts.Logger, handler: opts.Handler, obs: opts.Observer, dial: opts.Dial, serverTLS: stls, upTLS: utls}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.handler == nil {
		s.handler = VersionHandler(opts.Version)
	}
	if s.obs == nil {
		s.obs = nopObserver{}
	}
	if s.dial == nil {
		d := &net.Dialer{KeepAlive: 30 * time.Second}
		s.dial = d.DialContext
	}
	s.base, s.killAll = context.WithCancel(context.Background())
	s.mu.listeners = map[net.Listener]struct{}{}
	s.mu.conns = map[*conn]struct{}{}
	s.mu.keys = map[uint32][]*conn{}
	return s, nil
}

// Config returns the validated configuration.
func (s *Server) Config() Config { return s.cfg }

// ErrServerClosed is returned by Serve after Shutdown.
var ErrServerClosed = errors.New("proxy: server closed")

// Serve accepts connections on l until ctx is cancelled or Shutdown is
// called. When ctx is cancelled, Serve shuts the server down gracefully
// (Config.ShutdownTimeout) and returns nil once every session has ended.
// Serve closes l.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	s.mu.Lock()
	if s.mu.closed {
		s.mu.Unlock()
		_ = l.Close()
		return ErrServerClosed
	}
	s.mu.listeners[l] = struct{}{}
	s.mu.Unlock()

	stop := context.AfterFunc(ctx, func() {
		sctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
		defer cancel()
		_ = s.Shutdown(sctx)
	})
	defer stop()

	var backoff time.Duration
	for {
		c, err := l.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.mu.closed
			s.mu.Unlock()
			if closed {
				if ctx.Err() != nil {
					s.wg.Wait()
					return nil
				}
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, syscall.EMFILE) {
				// Out of file descriptors and the like: back off as
				// net/http does instead of spinning.
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				s.log.Warn("accept failed; retrying", "err", err, "backoff", backoff)
				time.Sleep(backoff)
				continue
			}
			s.removeListener(l)
			return fmt.Errorf("accept: %w", err)
		}
		backoff = 0
		s.startConn(c)
	}
}

func (s *Server) removeListener(l net.Listener) {
	s.mu.Lock()
	delete(s.mu.listeners, l)
	s.mu.Unlock()
	_ = l.Close()
}

func (s *Server) startConn(nc net.Conn) {
	c := newConn(s, nc)
	s.mu.Lock()
	if s.mu.closed {
		s.mu.Unlock()
		_ = nc.Close()
		return
	}
	s.mu.conns[c] = struct{}{}
	// Before its StartupMessage a connection costs a socket and nothing
	// else; a flood of silent ones must not lock out real clients, so
	// the oldest is shed to make room (real clients leave this phase
	// within a round trip or two, so the oldest is almost surely idle).
	var shed *conn
	if s.mu.starting.Len() >= s.cfg.MaxStartupConnections {
		shed = s.mu.starting.Remove(s.mu.starting.Front()).(*conn)
		shed.startingElem = nil
	}
	c.startingElem = s.mu.starting.PushBack(c)
	s.wg.Add(1)
	s.mu.Unlock()
	s.live.Add(1)
	s.obs.ConnectionOpened()
	if shed != nil {
		shed.log.Debug("closing a connection that sent no startup packet to make room", "max_startup_connections", s.cfg.MaxStartupConnections)
		shed.finish(EndStartupShed)
	}
	go c.serve()
}

// startupReceived moves c out of the pre-startup set once its
// StartupMessage has arrived; false means c was shed meanwhile.
func (s *Server) startupReceived(c *conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.startingElem == nil {
		return false
	}
	s.mu.starting.Remove(c.startingElem)
	c.startingElem = nil
	return true
}

// admitSession counts c as a session if MaxConnections allows another.
func (s *Server) admitSession() bool {
	if s.sessions.Add(1) > int64(s.cfg.MaxConnections) {
		s.sessions.Add(-1)
		return false
	}
	return true
}

func (s *Server) connDone(c *conn) {
	t := c.traffic()
	s.mu.Lock()
	s.mu.ended.add(t)
	delete(s.mu.conns, c)
	if c.startingElem != nil {
		s.mu.starting.Remove(c.startingElem)
		c.startingElem = nil
	}
	s.mu.Unlock()
	if c.admitted {
		s.sessions.Add(-1)
	}
	s.live.Add(-1)
	s.wg.Done()
}

// Shutdown stops accepting, lets sessions finish their current transaction,
// closes each as it becomes idle (FATAL 57P01 to the client), and force-closes
// the rest when ctx ends. It returns when every connection has ended: nil, or
// ctx's error when sessions had to be force-closed.
func (s *Server) Shutdown(ctx context.Context) error {
	s.draining.Store(true)
	s.mu.Lock()
	s.mu.closed = true
	for l := range s.mu.listeners {
		_ = l.Close()
		delete(s.mu.listeners, l)
	}
	for c := range s.mu.conns {
		c.wake()
	}
	s.mu.Unlock()

	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
	}
	s.killAll()
	s.mu.Lock()
	for c := range s.mu.conns {
		c.forceClose()
	}
	s.mu.Unlock()
	<-done
	return ctx.Err()
}

// Traffic is relayed traffic, summed over connections: what sessions sent
// after authentication.
type Traffic struct {
	// BytesIn and MessagesIn are client→upstream, BytesOut and MessagesOut
	// upstream→client; bytes include each message's 5-byte header.
	BytesIn, MessagesIn   uint64
	BytesOut, MessagesOut uint64
}

func (t *Traffic) add(o Traffic) {
	t.BytesIn += o.BytesIn
	t.MessagesIn += o.MessagesIn
	t.BytesOut += o.BytesOut
	t.MessagesOut += o.MessagesOut
}

// Traffic reports the traffic relayed since the server started, including
// what open sessions have relayed up to now, so a metrics scrape sees a
// long session's bytes while it runs. The totals never decrease. It costs a
// few atomic loads per open session; the relay itself only adds to
// per-connection counters.
func (s *Server) Traffic() Traffic {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.mu.ended
	for c := range s.mu.conns {
		t.add(c.traffic())
	}
	return t
}

// Sessions reports the number of open sessions: client connections past
// their StartupMessage, the ones Config.MaxConnections bounds.
func (s *Server) Sessions() int { return int(s.sessions.Load()) }

// Connections reports every open client connection, including those that
// have not sent their StartupMessage yet.
func (s *Server) Connections() int { return int(s.live.Load()) }

// registerKey registers the cancel key a session's client sees: the
// upstream backend's real process id, so that pg_backend_pid(),
// NotificationResponse, pg_stat_activity and pg_terminate_backend agree
// with it, and a secret minted here, as long as the upstream's (4 bytes in
// protocol 3.0, up to 256 in 3.2). The upstream's secret never leaves
// Atrium, so a client can cancel only through Atrium, which checks the key.
//
// The secret is stored in sess under s.mu, before sess becomes visible to
// lookupKey: a CancelRequest served on another connection's goroutine may
// read it the moment the key is in the map.
func (s *Server) registerKey(sess *conn, pid uint32, secretLen int) {
	secret := make([]byte, secretLen)
	_, _ = rand.Read(secret)
	s.mu.Lock()
	sess.keySecret = secret
	s.mu.keys[pid] = append(s.mu.keys[pid], sess)
	s.mu.Unlock()
}

func (s *Server) unregisterKey(sess *conn, pid uint32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rest := slices.DeleteFunc(s.mu.keys[pid], func(c *conn) bool { return c == sess })
	if len(rest) == 0 {
		delete(s.mu.keys, pid)
		return
	}
	s.mu.keys[pid] = rest
}

// lookupKey finds the session a CancelRequest names, comparing secrets in
// constant time.
func (s *Server) lookupKey(pid uint32, secret []byte) *conn {
	s.mu.Lock()
	sessions := slices.Clone(s.mu.keys[pid])
	s.mu.Unlock()
	var found *conn
	for _, sess := range sessions {
		if subtle.ConstantTimeCompare(sess.keySecret, secret) == 1 {
			found = sess
		}
	}
	return found
}

// dialUpstream connects to the upstream and negotiates TLS per
// Config.UpstreamSSLMode.
func (s *Server) dialUpstream(ctx context.Context) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.ConnectTimeout)
	defer cancel()
	nc, err := s.dial(ctx, "tcp", s.cfg.Upstream)
	if err != nil {
		return nil, fmt.Errorf("dial upstream %s: %w", s.cfg.Upstream, err)
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	if s.upTLS == nil {
		return nc, nil
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = nc.SetDeadline(dl)
	}
	var req [8]byte
	binary.BigEndian.PutUint32(req[:], 8)
	binary.BigEndian.PutUint32(req[4:], sslRequestCode)
	if _, err := nc.Write(req[:]); err != nil {
		nc.Close()
		return nil, fmt.Errorf("upstream ssl request: %w", err)
	}
	var ans [1]byte
	if _, err := io.ReadFull(nc, ans[:]); err != nil {
		nc.Close()
		return nil, fmt.Errorf("upstream ssl request: %w", err)
	}
	switch ans[0] {
	case 'S':
		tc := tls.Client(nc, s.upTLS)
		if err := tc.HandshakeContext(ctx); err != nil {
			nc.Close()
			return nil, fmt.Errorf("upstream tls handshake: %w", err)
		}
		_ = tc.SetDeadline(time.Time{})
		return tc, nil
	case 'N':
		if s.cfg.UpstreamSSLMode == "prefer" {
			_ = nc.SetDeadline(time.Time{})
			return nc, nil
		}
		nc.Close()
		return nil, fmt.Errorf("upstream server does not support SSL, but sslmode=%s", s.cfg.UpstreamSSLMode)
	default:
		nc.Close()
		return nil, fmt.Errorf("upstream answered SSLRequest with %q", ans[0])
	}
}

// cancelUpstream sends a CancelRequest for the upstream backend (pid,
// secret) on a new connection and waits for the server to close it, unless
// pending, asked once connected, says there is nothing left to cancel.
func (s *Server) cancelUpstream(ctx context.Context, pid uint32, secret []byte, pending func() bool) (sent bool, err error) {
	nc, err := s.dialUpstream(ctx)
	if err != nil {
		return false, err
	}
	defer nc.Close()
	// Checked after the dial, the slow part, and just before the write.
	if !pending() {
		return false, nil
	}
	_ = nc.SetDeadline(time.Now().Add(s.cfg.ConnectTimeout))
	b := make([]byte, 12, 12+len(secret))
	binary.BigEndian.PutUint32(b, uint32(12+len(secret)))
	binary.BigEndian.PutUint32(b[4:], cancelRequestCode)
	binary.BigEndian.PutUint32(b[8:], pid)
	b = append(b, secret...)
	if _, err := nc.Write(b); err != nil {
		return false, fmt.Errorf("send cancel request upstream: %w", err)
	}
	// The server closes the connection once it has signalled the backend.
	_, _ = io.Copy(io.Discard, nc)
	return true, nil
}
