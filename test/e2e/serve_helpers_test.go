package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The real atrium binary, built once for the tests that run `atrium serve`
// as a process.
var atriumBin struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// TestMain removes the binary built by atriumBinary.
func TestMain(m *testing.M) {
	code := m.Run()
	if atriumBin.dir != "" {
		_ = os.RemoveAll(atriumBin.dir)
	}
	os.Exit(code)
}

// atriumBinary builds cmd/atrium (once per test binary) and returns its path.
func atriumBinary(t *testing.T) string {
	t.Helper()
	atriumBin.once.Do(func() {
		_, file, _, _ := runtime.Caller(0)
		root := filepath.Join(filepath.Dir(file), "..", "..")
		atriumBin.dir, atriumBin.err = os.MkdirTemp("", "atrium-e2e-bin-")
		if atriumBin.err != nil {
			return
		}
		atriumBin.path = filepath.Join(atriumBin.dir, "atrium")
		cmd := exec.Command("go", "build", "-o", atriumBin.path, "./cmd/atrium")
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			atriumBin.err = fmt.Errorf("go build ./cmd/atrium: %w\n%s", err, out)
		}
	})
	require.NoError(t, atriumBin.err)
	return atriumBin.path
}

// freeAddr returns a 127.0.0.1 address with a port that was free a moment
// ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// lockedBuffer collects a process's output for assertions.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// serveProc is one `atrium serve` process.
type serveProc struct {
	cmd    *exec.Cmd
	out    *lockedBuffer
	listen string
	admin  string
	exited chan struct{}
	err    error // the process's exit, valid after exited is closed
}

// startServe runs `atrium serve --listen listen` (no --listen when listen
// is "") with args and extra environment. admin is where its admin server
// listens, which args, env or a configuration file must arrange. It waits
// until /readyz answers 200 and stops the process with SIGTERM at test end.
func startServe(t *testing.T, listen, admin string, env []string, args ...string) *serveProc {
	t.Helper()
	bin := atriumBinary(t)
	p := &serveProc{out: &lockedBuffer{}, listen: listen, admin: admin, exited: make(chan struct{})}
	full := []string{"serve", "--log-format", "json"}
	if listen != "" {
		full = append(full, "--listen", listen)
	}
	full = append(full, args...)
	p.cmd = exec.Command(bin, full...)
	// Only what the test sets: no ATRIUM_* from the developer's shell.
	p.cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, env...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	require.NoError(t, p.cmd.Start())
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.stop(t)
		if t.Failed() {
			t.Logf("atrium serve %s output:\n%s", p.listen, p.out.String())
		}
	})
	require.Eventually(t, func() bool {
		select {
		case <-p.exited:
			return true
		default:
		}
		code, _ := p.get("/readyz")
		return code == http.StatusOK
	}, 60*time.Second, 50*time.Millisecond, "atrium serve did not become ready")
	select {
	case <-p.exited:
		t.Fatalf("atrium serve exited during start-up: %v\n%s", p.err, p.out.String())
	default:
	}
	return p
}

// stop sends SIGTERM and waits for the exit (SIGKILL after a minute).
func (p *serveProc) stop(t *testing.T) {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(time.Minute):
		_ = p.cmd.Process.Kill()
		<-p.exited
		t.Errorf("atrium serve did not stop within a minute of SIGTERM")
	}
}

// get fetches a path of the admin server.
func (p *serveProc) get(path string) (int, string) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + p.admin + path)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// metric returns the value of the sample whose name and labels (a
// Prometheus text-format prefix such as
// `atrium_nl_questions_total{outcome="result_cache"}`) match, 0 when absent.
func (p *serveProc) metric(t *testing.T, sample string) float64 {
	t.Helper()
	code, body := p.get("/metrics")
	require.Equal(t, http.StatusOK, code, body)
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		name, value, ok := strings.Cut(line, " ")
		if !ok || name != sample {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		require.NoError(t, err, line)
		return v
	}
	return 0
}

// dsn is a connection URL through the process for database db (a DSN).
func (p *serveProc) dsn(t *testing.T, db string) string {
	t.Helper()
	u, err := url.Parse(db)
	require.NoError(t, err)
	u.Host = p.listen
	q := u.Query()
	q.Set("sslmode", "disable")
	u.RawQuery = q.Encode()
	return u.String()
}

// runAtrium runs another atrium subcommand to completion.
func runAtrium(t *testing.T, env []string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, atriumBinary(t), args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, env...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "atrium %s:\n%s", strings.Join(args, " "), out)
	return string(out)
}
