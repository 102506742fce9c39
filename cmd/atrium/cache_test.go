package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"net"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/proxy/resultcache"
)

func TestCacheFlush(t *testing.T) {
	path, err := exec.LookPath("redis-server")
	require.NoError(t, err, "redis-server not installed")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	cmd := exec.Command(path, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	ctx := context.Background()
	require.Eventually(t, func() bool { return c.Ping(ctx).Err() == nil }, 10*time.Second, 20*time.Millisecond)

	cache := resultcache.New(resultcache.Config{}, resultcache.NewRedis(redis.NewClient(&redis.Options{Addr: addr})), resultcache.Options{})
	defer cache.Close()
	cache.PutSQL(ctx, "k1", &resultcache.SQLEntry{SQL: "SELECT 1"})
	cache.PutSQL(ctx, "k2", &resultcache.SQLEntry{SQL: "SELECT 2"})
	require.NoError(t, c.Set(ctx, "someone:else", "v", 0).Err())

	var out, errOut bytes.Buffer
	env := &cliEnv{stdout: &out, stderr: &errOut, getenv: func(string) string { return "" }}
	require.NoError(t, runCache(ctx, env, []string{"flush", "--redis", "redis://" + addr + "/0"}))
	require.Contains(t, out.String(), "deleted 2 cached entries")
	_, ok := cache.GetSQL(ctx, "k1")
	require.False(t, ok)
	require.Equal(t, "v", c.Get(ctx, "someone:else").Val())

	var ue usageError
	require.True(t, errors.As(runCache(ctx, env, []string{"flush"}), &ue), "--redis is required")
	require.True(t, errors.As(runCache(ctx, env, []string{"bogus"}), &ue))
	require.ErrorIs(t, runCache(ctx, env, []string{"flush", "--help"}), flag.ErrHelp)
	require.Contains(t, errOut.String(), "-redis")
}
