package proxy

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"
)

// Config holds the proxy's settings. The zero value of a field means its
// default; Validate fills defaults and checks the whole.
type Config struct {
	// Upstream is the PostgreSQL server's host:port. Default 127.0.0.1:5432.
	Upstream string
	// UpstreamSSLMode is disable, prefer, require or verify-full, with
	// libpq's meaning. Default prefer.
	UpstreamSSLMode string
	// UpstreamSSLRootCert is a PEM file of CAs trusted for verify-full.
	// Default: the system roots.
	UpstreamSSLRootCert string
	// TLSCert and TLSKey are PEM files of the certificate Atrium presents to
	// clients that send SSLRequest. Both or neither; without them SSLRequest
	// is answered 'N'.
	TLSCert, TLSKey string
	// MaxConnections bounds concurrent sessions: connections that have sent
	// their StartupMessage; more are refused with SQLSTATE 53300. Connections
	// still before their StartupMessage are bounded by MaxStartupConnections
	// instead, so idle sockets cannot use up sessions. Default 1000.
	MaxConnections int
	// MaxStartupConnections bounds connections that have not yet sent their
	// StartupMessage (TLS handshake included). When a new connection would
	// exceed it, the oldest such connection is closed without a reply: a
	// real client finishes this phase in milliseconds, so the ones shed are
	// those that sent nothing. Default 1000.
	MaxStartupConnections int
	// StartupPacketTimeout bounds the phase before the StartupMessage; a
	// connection silent for longer is closed without a reply, as PostgreSQL
	// closes one that sends no startup packet. Default 10s (capped by
	// StartupTimeout).
	StartupPacketTimeout time.Duration
	// MaxMessageSize bounds the body of one client message in bytes; a larger
	// message is refused with SQLSTATE 54000 (logged) and the connection
	// closed. Default and most: PostgreSQL's own limit, 1 GiB less 6 bytes
	// (PQ_LARGE_MESSAGE_LIMIT less the length word), so that no client
	// message the server would take is refused.
	MaxMessageSize int
	// MaxPortalBuffer bounds the bytes of intercepted statements' rows a
	// session holds for portals fetched with a row limit per Execute (JDBC's
	// fetch size, psycopg's named cursors). A Statement runs once per
	// portal, so the rows the first Execute does not hand out wait in memory
	// for the next; a result that would hold more than this (over all the
	// session's portals) fails with SQLSTATE 54000 instead of growing the
	// proxy without bound. Fetching without a row limit streams and is not
	// bounded. Default 64 MiB.
	MaxPortalBuffer int
	// IdleTimeout closes a client session that has nothing running upstream
	// and sent nothing for this long (SQLSTATE 57P05). Default 0: never.
	IdleTimeout time.Duration
	// ShutdownTimeout is how long Shutdown lets sessions finish their current
	// transaction before it closes them. Default 30s.
	ShutdownTimeout time.Duration
	// ConnectTimeout bounds dialling the upstream (TCP and TLS). Default 10s.
	ConnectTimeout time.Duration
	// StartupTimeout bounds a client's startup and authentication, like
	// PostgreSQL's authentication_timeout. Default 60s.
	StartupTimeout time.Duration
}

// Defaults used by Validate.
const (
	DefaultListen          = "127.0.0.1:6433"
	DefaultUpstream        = "127.0.0.1:5432"
	DefaultMaxConnections  = 1000
	DefaultMaxStartupConns = 1000
	DefaultStartupPacket   = 10 * time.Second
	DefaultMaxMessageSize  = maxProtocolBody
	DefaultMaxPortalBuffer = 64 << 20
	DefaultShutdownTimeout = 30 * time.Second
	DefaultConnectTimeout  = 10 * time.Second
	DefaultStartupTimeout  = 60 * time.Second
)

// Validate fills defaults in place and reports the first invalid setting.
func (c *Config) Validate() error {
	if c.Upstream == "" {
		c.Upstream = DefaultUpstream
	}
	if _, _, err := net.SplitHostPort(c.Upstream); err != nil {
		return fmt.Errorf("upstream %q: want host:port: %w", c.Upstream, err)
	}
	switch c.UpstreamSSLMode {
	case "":
		c.UpstreamSSLMode = "prefer"
	case "disable", "prefer", "require", "verify-full":
	default:
		return fmt.Errorf("upstream sslmode %q: want disable, prefer, require or verify-full", c.UpstreamSSLMode)
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return errors.New("tls cert and tls key must be given together")
	}
	if c.MaxConnections == 0 {
		c.MaxConnections = DefaultMaxConnections
	}
	if c.MaxConnections < 0 {
		return fmt.Errorf("max connections %d: must be positive", c.MaxConnections)
	}
	if c.MaxStartupConnections == 0 {
		c.MaxStartupConnections = DefaultMaxStartupConns
	}
	if c.MaxStartupConnections < 0 {
		return fmt.Errorf("max startup connections %d: must be positive", c.MaxStartupConnections)
	}
	if c.MaxMessageSize == 0 {
		c.MaxMessageSize = DefaultMaxMessageSize
	}
	if c.MaxMessageSize < 4096 || c.MaxMessageSize > maxProtocolBody {
		return fmt.Errorf("max message size %d: must be between 4096 and %d", c.MaxMessageSize, maxProtocolBody)
	}
	if c.MaxPortalBuffer == 0 {
		c.MaxPortalBuffer = DefaultMaxPortalBuffer
	}
	if c.MaxPortalBuffer < 0 {
		return fmt.Errorf("max portal buffer %d: must be positive", c.MaxPortalBuffer)
	}
	if c.IdleTimeout < 0 {
		return fmt.Errorf("idle timeout %s: must not be negative", c.IdleTimeout)
	}
	if c.ShutdownTimeout == 0 {
		c.ShutdownTimeout = DefaultShutdownTimeout
	}
	if c.ConnectTimeout == 0 {
		c.ConnectTimeout = DefaultConnectTimeout
	}
	if c.StartupTimeout == 0 {
		c.StartupTimeout = DefaultStartupTimeout
	}
	if c.StartupPacketTimeout == 0 {
		c.StartupPacketTimeout = DefaultStartupPacket
	}
	if c.ShutdownTimeout < 0 || c.ConnectTimeout < 0 || c.StartupTimeout < 0 || c.StartupPacketTimeout < 0 {
		return errors.New("timeouts must not be negative")
	}
	return nil
}

// maxProtocolBody is the largest message body PostgreSQL reads:
// PQ_LARGE_MESSAGE_LIMIT (MaxAllocSize - 1) bounds the length word, which
// counts itself.
const maxProtocolBody = 0x3fffffff - 1 - 4

func (c *Config) serverTLS() (*tls.Config, error) {
	if c.TLSCert == "" {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(c.TLSCert, c.TLSKey)
	if err != nil {
		return nil, fmt.Errorf("load tls key pair: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

func (c *Config) upstreamTLS() (*tls.Config, error) {
	if c.UpstreamSSLMode == "disable" {
		return nil, nil
	}
	host, _, _ := net.SplitHostPort(c.Upstream)
	cfg := &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
	if c.UpstreamSSLMode != "verify-full" {
		// prefer and require encrypt without authenticating the server, as
		// libpq does.
		cfg.InsecureSkipVerify = true
		return cfg, nil
	}
	if c.UpstreamSSLRootCert != "" {
		pem, err := os.ReadFile(c.UpstreamSSLRootCert)
		if err != nil {
			return nil, fmt.Errorf("read upstream root cert: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("upstream root cert %s: no PEM certificates", c.UpstreamSSLRootCert)
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}

// Options carries the proxy's injected dependencies; nil fields get safe
// defaults.
type Options struct {
	// Logger receives connection-level logs. Default: discard.
	Logger *slog.Logger
	// Handler intercepts statements. Default: only VersionHandler.
	Handler Handler
	// Version is the string SHOW atrium.version reports when Handler is nil.
	Version string
	// Observer receives counters for metrics. Default: none.
	Observer Observer
	// Dial connects to the upstream. Default: a net.Dialer.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// EndReason classifies why a client connection ended.
type EndReason uint8

// End reasons, for logs and metrics.
const (
	EndClientClosed   EndReason = iota // client sent Terminate or closed the socket
	EndClientError                     // protocol violation or I/O error on the client side
	EndUpstreamClosed                  // upstream closed or failed
	EndUpstreamDial                    // could not connect to the upstream
	EndAuthFailed                      // upstream refused authentication or startup
	EndIdleTimeout                     // --idle-timeout
	EndStartupTimeout                  // startup/authentication took too long
	EndShutdown                        // proxy shutdown
	EndRefused                         // refused before startup: too many connections, TLS required, ...
	EndCancelRequest                   // the connection carried a CancelRequest
	EndInternal                        // a bug: recovered panic
	EndStartupShed                     // closed before its StartupMessage to make room (MaxStartupConnections)
)

var endReasonNames = [...]string{
	EndClientClosed:   "client_closed",
	EndClientError:    "client_error",
	EndUpstreamClosed: "upstream_closed",
	EndUpstreamDial:   "upstream_dial",
	EndAuthFailed:     "auth_failed",
	EndIdleTimeout:    "idle_timeout",
	EndStartupTimeout: "startup_timeout",
	EndShutdown:       "shutdown",
	EndRefused:        "refused",
	EndCancelRequest:  "cancel_request",
	EndInternal:       "internal",
	EndStartupShed:    "startup_shed",
}

func (r EndReason) String() string {
	if int(r) < len(endReasonNames) {
		return endReasonNames[r]
	}
	return fmt.Sprintf("EndReason(%d)", r)
}

// ConnStats describes a finished client connection.
type ConnStats struct {
	Reason        EndReason
	Authenticated bool
	Duration      time.Duration
	// Client→upstream and upstream→client traffic after authentication.
	BytesIn, BytesOut       uint64
	MessagesIn, MessagesOut uint64
}

// Observer receives events for metrics. Methods are called from session
// goroutines concurrently and must be cheap and non-blocking.
type Observer interface {
	// ConnectionOpened is called when a client connection is accepted.
	ConnectionOpened()
	// SessionStarted is called when a client has authenticated upstream.
	SessionStarted()
	// UpstreamConnected is called after each attempt to connect a session
	// to the upstream (TCP and, when configured, TLS), with its duration
	// and error (nil: connected).
	UpstreamConnected(d time.Duration, err error)
	// ConnectionClosed is called once per accepted connection. Its traffic
	// figures are also in Server.Traffic, which reports them while the
	// session runs.
	ConnectionClosed(s ConnStats)
	// Intercepted is called after the proxy answered a statement itself;
	// kind comes from Kinded, err is what the client saw (nil: success).
	Intercepted(kind string, d time.Duration, err error)
}

type nopObserver struct{}

func (nopObserver) ConnectionOpened()                        {}
func (nopObserver) SessionStarted()                          {}
func (nopObserver) UpstreamConnected(time.Duration, error)   {}
func (nopObserver) ConnectionClosed(ConnStats)               {}
func (nopObserver) Intercepted(string, time.Duration, error) {}
