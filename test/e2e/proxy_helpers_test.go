package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/atriumdb/atrium/proxy"
	"github.com/atriumdb/atrium/test/testdb"
	"github.com/stretchr/testify/require"
)

// testProxy is an Atrium proxy listening on 127.0.0.1:0 for one test.
type testProxy struct {
	srv  *proxy.Server
	addr string
	done chan error
	obs  *countingObserver
}

// proxyOpts tweaks startProxy.
type proxyOpts struct {
	cfg     proxy.Config
	handler proxy.Handler
}

func upstreamAddr(t testing.TB) string {
	u, err := url.Parse(testdb.AdminDSN())
	require.NoError(t, err)
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = "5432"
	}
	return net.JoinHostPort(host, port)
}

// startProxy starts a proxy in front of the test PostgreSQL server (or
// o.cfg.Upstream) and shuts it down at test end.
func startProxy(t testing.TB, o proxyOpts) *testProxy {
	t.Helper()
	cfg := o.cfg
	if cfg.Upstream == "" {
		cfg.Upstream = upstreamAddr(t)
	}
	if cfg.UpstreamSSLMode == "" {
		cfg.UpstreamSSLMode = "disable"
	}
	h := o.handler
	if h == nil {
		h = proxy.VersionHandler("test-version")
	}
	obs := &countingObserver{}
	srv, err := proxy.NewServer(cfg, proxy.Options{
		Logger:   slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Handler:  h,
		Observer: obs,
	})
	require.NoError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &testProxy{srv: srv, addr: l.Addr().String(), done: make(chan error, 1), obs: obs}
	go func() { p.done <- srv.Serve(context.Background(), l) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-p.done
	})
	return p
}

// dsn is a URL for the proxy with the given database and extra parameters.
func (p *testProxy) dsn(t testing.TB, dbDSN string, extra ...string) string {
	t.Helper()
	u, err := url.Parse(dbDSN)
	require.NoError(t, err)
	u.Host = p.addr
	q := u.Query()
	if q.Get("sslmode") == "" {
		q.Set("sslmode", "disable")
	}
	for i := 0; i+1 < len(extra); i += 2 {
		q.Set(extra[i], extra[i+1])
	}
	u.RawQuery = q.Encode()
	return u.String()
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

// countingObserver counts proxy events for assertions.
type countingObserver struct {
	mu          sync.Mutex
	opened      int
	started     int
	closed      []proxy.ConnStats
	intercepted map[string]int
}

func (o *countingObserver) ConnectionOpened()                      { o.mu.Lock(); o.opened++; o.mu.Unlock() }
func (o *countingObserver) SessionStarted()                        { o.mu.Lock(); o.started++; o.mu.Unlock() }
func (o *countingObserver) UpstreamConnected(time.Duration, error) {}
func (o *countingObserver) ConnectionClosed(s proxy.ConnStats) {
	o.mu.Lock()
	o.closed = append(o.closed, s)
	o.mu.Unlock()
}
func (o *countingObserver) Intercepted(kind string, _ time.Duration, _ error) {
	o.mu.Lock()
	if o.intercepted == nil {
		o.intercepted = map[string]int{}
	}
	o.intercepted[kind]++
	o.mu.Unlock()
}

func (o *countingObserver) reasons() []proxy.EndReason {
	o.mu.Lock()
	defer o.mu.Unlock()
	var r []proxy.EndReason
	for _, s := range o.closed {
		r = append(r, s.Reason)
	}
	return r
}

// openFDs counts this process's open file descriptors.
func openFDs(t testing.TB) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	return len(ents)
}

// freePort returns a TCP port that was free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// writeSelfSigned writes a self-signed certificate and key for 127.0.0.1
// into dir and returns their paths.
func writeSelfSigned(t testing.TB, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:     []string{"localhost"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	kder, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	certFile, keyFile = filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600))
	return certFile, keyFile
}

// cluster is a throwaway PostgreSQL cluster run by the postgres OS user.
type cluster struct {
	dir  string
	port int
	bin  string
}

func (c *cluster) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(c.port)) }

// newCluster initdbs a cluster in a temporary directory with the given
// pg_hba.conf lines and postgresql.conf settings, starts it and stops it at
// test end. It needs root (to run as the postgres OS user).
func newCluster(t testing.TB, hba []string, conf []string) *cluster {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("throwaway PostgreSQL cluster tests need root (initdb runs as the postgres OS user via runuser)")
	}
	pgUser, err := user.Lookup("postgres")
	if err != nil {
		t.Skip("no postgres OS user: " + err.Error())
	}
	bin := "/usr/lib/postgresql/15/bin"
	if _, err := os.Stat(filepath.Join(bin, "initdb")); err != nil {
		t.Skip("PostgreSQL 15 server binaries not found in " + bin)
	}
	dir, err := os.MkdirTemp("", "atrium-pg-")
	require.NoError(t, err)
	uid, _ := strconv.Atoi(pgUser.Uid)
	gid, _ := strconv.Atoi(pgUser.Gid)
	require.NoError(t, os.Chown(dir, uid, gid))
	c := &cluster{dir: dir, port: freePort(t), bin: bin}
	data := filepath.Join(dir, "data")
	c.run(t, "initdb", "-D", data, "-U", "postgres", "--auth-local=trust", "--auth-host=trust", "-E", "UTF8", "--no-sync")
	hbaText := "local all all trust\n" + strings.Join(hba, "\n") + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(data, "pg_hba.conf"), []byte(hbaText), 0o600))
	require.NoError(t, os.Chown(filepath.Join(data, "pg_hba.conf"), uid, gid))
	confText := fmt.Sprintf("port = %d\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '%s'\nfsync = off\nshared_buffers = 16MB\nmax_connections = 30\n%s\n",
		c.port, dir, strings.Join(conf, "\n"))
	f, err := os.OpenFile(filepath.Join(data, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(confText)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	t.Cleanup(func() {
		_ = exec.Command("runuser", "-u", "postgres", "--", filepath.Join(bin, "pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop").Run()
		_ = os.RemoveAll(dir)
	})
	c.start(t)
	return c
}

// chownToPostgres hands files (e.g. TLS keys) to the postgres OS user.
func chownToPostgres(t testing.TB, paths ...string) {
	t.Helper()
	pgUser, err := user.Lookup("postgres")
	require.NoError(t, err)
	uid, _ := strconv.Atoi(pgUser.Uid)
	gid, _ := strconv.Atoi(pgUser.Gid)
	for _, p := range paths {
		require.NoError(t, os.Chown(p, uid, gid))
	}
}

func (c *cluster) run(t testing.TB, prog string, args ...string) string {
	t.Helper()
	cmd := exec.Command("runuser", append([]string{"-u", "postgres", "--", filepath.Join(c.bin, prog)}, args...)...)
	cmd.Dir = c.dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s %v: %s", prog, args, out)
	return string(out)
}

func (c *cluster) start(t testing.TB) {
	c.run(t, "pg_ctl", "-D", filepath.Join(c.dir, "data"), "-l", filepath.Join(c.dir, "log"), "-w", "-t", "60", "start")
}

func (c *cluster) stop(t testing.TB, mode string) {
	c.run(t, "pg_ctl", "-D", filepath.Join(c.dir, "data"), "-m", mode, "-w", "stop")
}

// sql runs statements as the superuser over the cluster's Unix socket.
func (c *cluster) sql(t testing.TB, stmts string) {
	t.Helper()
	cmd := exec.Command("psql", "-X", "-v", "ON_ERROR_STOP=1", "-h", c.dir, "-p", strconv.Itoa(c.port), "-U", "postgres", "-d", "postgres", "-c", stmts)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "psql: %s", out)
}

// psqlCmd runs psql against conninfo with extra arguments.
func psqlCmd(ctx context.Context, conninfo string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "psql", append([]string{"-X", "-v", "ON_ERROR_STOP=0", "--no-psqlrc", conninfo}, args...)...)
	cmd.Env = append(os.Environ(), "PGCONNECT_TIMEOUT=10")
	return cmd
}
