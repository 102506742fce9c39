package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// testFlags builds a FlagSet shaped like a real subcommand's.
func testFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.String("listen", "127.0.0.1:6433", "address to listen on")
	fs.String("upstream", "127.0.0.1:5432", "PostgreSQL server to forward to")
	fs.Duration("cache-ttl", 5*time.Minute, "result cache TTL")
	fs.Int("max-connections", 100, "client connection cap")
	fs.Bool("catalog-watch", false, "keep the catalog current")
	fs.String("llm-api-key", "", "LLM API key")
	fs.String("redis", "", "Redis URL")
	fs.String("schemas", "", "schemas to include")
	return fs
}

// testKnown is the command → flags map the file checks run against.
func testKnown() map[string]map[string]bool {
	names := map[string]bool{}
	testFlags("serve").VisitAll(func(f *flag.Flag) { names[f.Name] = true })
	return map[string]map[string]bool{
		"serve":        names,
		"catalog sync": {"dsn": true, "schemas": true},
	}
}

func envFrom(m map[string]string) *cliEnv {
	return &cliEnv{stdout: io.Discard, stderr: io.Discard, getenv: func(k string) string { return m[k] }}
}

// resolve parses args for a "serve"-like command and applies env and file.
func resolve(t *testing.T, env map[string]string, args ...string) (*flag.FlagSet, *settings, error) {
	t.Helper()
	fs := testFlags("serve")
	addConfigFlag(fs)
	require.NoError(t, fs.Parse(args))
	st, err := resolveSettings(envFrom(env), fs, testKnown)
	return fs, st, err
}

func value(fs *flag.FlagSet, name string) string { return fs.Lookup(name).Value.String() }

func TestGoodConfigFiles(t *testing.T) {
	tests := []struct {
		file string
		want map[string]string
	}{
		{"top_level.yaml", map[string]string{"upstream": "db.internal:5432", "cache-ttl": "10m0s", "listen": "0.0.0.0:6433", "max-connections": "500"}},
		{"grouped_wins.yaml", map[string]string{"cache-ttl": "1m30s", "listen": "127.0.0.1:7000"}},
		{"list.yaml", map[string]string{"schemas": "public,sales*", "catalog-watch": "true"}},
		{"empty.yaml", map[string]string{"listen": "127.0.0.1:6433", "cache-ttl": "5m0s"}},
		{"null_values.yaml", map[string]string{"listen": "127.0.0.1:6433", "upstream": "127.0.0.1:5432"}},
		{"anchors.yaml", map[string]string{"cache-ttl": "2m0s"}},
		{"secrets.yaml", map[string]string{"llm-api-key": "sk-live-123456", "redis": "redis://:hunter2@cache:6379/0"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join("testdata", "config", "good", tt.file)
			fs, st, err := resolve(t, nil, "--config", path)
			require.NoError(t, err)
			for k, v := range tt.want {
				require.Equal(t, v, value(fs, k), "key %s", k)
			}
			require.Equal(t, path, st.file)
		})
	}
}

func TestBadConfigFiles(t *testing.T) {
	// Each error must name the file position and the offending key or value.
	tests := []struct {
		file string
		want []string
	}{
		{"syntax.yaml", []string{"syntax.yaml"}},
		{"not_mapping.yaml", []string{"not_mapping.yaml:1", "mapping"}},
		{"unknown_key.yaml", []string{"unknown_key.yaml:3", `"lisen"`}},
		{"bad_duration.yaml", []string{"bad_duration.yaml:3", `"cache-ttl"`, "5 minutes"}},
		{"bad_int.yaml", []string{"bad_int.yaml:1", `"max-connections"`}},
		{"bad_bool.yaml", []string{"bad_bool.yaml:2", `"catalog-watch"`}},
		{"nested_list.yaml", []string{"nested_list.yaml:3", `"schemas"`}},
		{"config_key.yaml", []string{"config_key.yaml:2", `"config"`}},
		{"duplicate.yaml", []string{"duplicate.yaml", "listen"}},
		{"unknown_group.yaml", []string{"unknown_group.yaml:1", `"srve"`}},
		{"unknown_top_key.yaml", []string{"unknown_top_key.yaml:1", `"upstreem"`}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			_, _, err := resolve(t, nil, "--config", filepath.Join("testdata", "config", "bad", tt.file))
			require.Error(t, err)
			for _, w := range tt.want {
				require.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestPrecedence(t *testing.T) {
	file := filepath.Join("testdata", "config", "good", "top_level.yaml")
	env := map[string]string{"ATRIUM_UPSTREAM": "env-host:5432", "ATRIUM_LISTEN": "10.0.0.1:6433"}
	fs, st, err := resolve(t, env, "--config", file, "--listen", "127.0.0.9:1")
	require.NoError(t, err)

	tests := []struct {
		key, value string
		from       source
		origin     string
	}{
		{"listen", "127.0.0.9:1", sourceFlag, "--listen"},           // flag beats env and file
		{"upstream", "env-host:5432", sourceEnv, "ATRIUM_UPSTREAM"}, // env beats file
		{"max-connections", "500", sourceFile, file + ":6"},         // file group
		{"cache-ttl", "10m0s", sourceFile, file + ":3"},             // file top level
		{"catalog-watch", "false", sourceDefault, ""},               // default
		{"config", file, sourceFlag, "--config"},                    // the file itself
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			require.Equal(t, tt.value, value(fs, tt.key))
			s, ok := st.get(tt.key)
			require.True(t, ok)
			require.Equal(t, tt.from, s.from)
			require.Equal(t, tt.origin, s.origin)
		})
	}
}

func TestConfigFileFromEnvironment(t *testing.T) {
	file := filepath.Join("testdata", "config", "good", "top_level.yaml")
	fs, st, err := resolve(t, map[string]string{"ATRIUM_CONFIG": file})
	require.NoError(t, err)
	require.Equal(t, file, st.file)
	require.Equal(t, "db.internal:5432", value(fs, "upstream"))
	s, _ := st.get("config")
	require.Equal(t, sourceEnv, s.from)
}

func TestBadEnvironmentValue(t *testing.T) {
	_, _, err := resolve(t, map[string]string{"ATRIUM_CACHE_TTL": "forever"})
	require.ErrorContains(t, err, "ATRIUM_CACHE_TTL")
	require.ErrorContains(t, err, "cache-ttl")

	// A secret's bad value is not echoed.
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.Int("redis-password-len", 0, "")
	fs.Int("api-token", 0, "")
	require.NoError(t, fs.Parse(nil))
	_, err = resolveSettings(envFrom(map[string]string{"ATRIUM_API_TOKEN": "tok-secret"}), fs, nil)
	require.ErrorContains(t, err, "ATRIUM_API_TOKEN")
	require.NotContains(t, err.Error(), "tok-secret")
}

func TestMissingConfigFile(t *testing.T) {
	_, _, err := resolve(t, nil, "--config", filepath.Join(t.TempDir(), "absent.yaml"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestEnvName(t *testing.T) {
	require.Equal(t, "ATRIUM_LLM_URL", envName("llm-url"))
	require.Equal(t, "ATRIUM_CATALOG_READ_DSN", envName("catalog-read-dsn"))
}

func TestGroupChain(t *testing.T) {
	require.Equal(t, []string{"catalog sync", "catalog", ""}, groupChain("catalog sync"))
	require.Equal(t, []string{"serve", ""}, groupChain("serve"))
}

func TestMasking(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"llm-api-key", "sk-123", maskedValue},
		{"redis-password", "hunter2", maskedValue},
		{"auth-token", "t", maskedValue},
		{"client-secret", "s", maskedValue},
		{"llm-api-key", "", ""},
		{"tls-key", "/etc/atrium/tls.key", "/etc/atrium/tls.key"},
		{"llm-api-key-file", "/run/secrets/key", "/run/secrets/key"},
		{"keyword-weight", "0.5", "0.5"},
		{"dsn", "postgres://atrium:s3cr%40t@db:5432/app?sslmode=require", "postgres://atrium:****@db:5432/app?sslmode=require"},
		{"dsn", "postgres://atrium@db/app", "postgres://atrium@db/app"},
		{"dsn", "postgres://u:p@ss/w#rd@db/app", "postgres://u:****@db/app"},
		{"redis", "redis://:hunter2@cache:6379/0", "redis://:****@cache:6379/0"},
		{"redis", "redis://u:a@h1:6379,redis://u:b@h2:6379", "redis://u:****@h1:6379,redis://u:****@h2:6379"},
		{"dsn", "host=db user=atrium password=s3cret dbname=app", "host=db user=atrium password=**** dbname=app"},
		{"dsn", `host=db password = 'it\'s \\ secret' dbname=app`, "host=db password = **** dbname=app"},
		{"dsn", "postgres://db/app?user=a&password=s3cret&sslmode=disable", "postgres://db/app?user=a&password=****&sslmode=disable"},
		{"upstream", "db:5432", "db:5432"},
	}
	for _, tt := range tests {
		t.Run(tt.name+"="+tt.in, func(t *testing.T) {
			got := maskValue(tt.name, tt.in)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestReload(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "atrium.yaml")
	write := func(s string) { require.NoError(t, os.WriteFile(file, []byte(s), 0o600)) }
	write("serve:\n  cache-ttl: 1m\n  max-connections: 10\n")

	env := map[string]string{}
	fs := testFlags("serve")
	addConfigFlag(fs)
	require.NoError(t, fs.Parse([]string{"--config", file, "--upstream", "pinned:5432"}))
	st, err := resolveSettings(envFrom(env), fs, testKnown)
	require.NoError(t, err)

	r, err := st.reloader("cache-ttl", "max-connections", "upstream", "catalog-watch")
	require.NoError(t, err)
	var got []map[string]any
	unsubscribe := r.Subscribe(func(changed map[string]any) { got = append(got, changed) })

	// Nothing changed: no notification.
	changed, err := r.Reload()
	require.NoError(t, err)
	require.Empty(t, changed)
	require.Empty(t, got)

	// The file changes two keys; the flag-pinned key stays pinned even
	// though the environment now names another value.
	write("serve:\n  cache-ttl: 2m\n  max-connections: 10\n")
	env["ATRIUM_UPSTREAM"] = "moved:5432"
	env["ATRIUM_CATALOG_WATCH"] = "true"
	changed, err = r.Reload()
	require.NoError(t, err)
	require.Equal(t, map[string]any{"cache-ttl": 2 * time.Minute, "catalog-watch": true}, changed)
	require.Len(t, got, 1)

	// An invalid value changes nothing and names the key.
	write("serve:\n  cache-ttl: soon\n  max-connections: 20\n")
	_, err = r.Reload()
	require.ErrorContains(t, err, `"cache-ttl"`)
	write("serve:\n  cache-ttl: 2m\n  max-connections: 10\n")
	changed, err = r.Reload()
	require.NoError(t, err)
	require.Empty(t, changed, "the failed reload must not have applied max-connections")

	// Removing a key from the file returns it to its default.
	write("")
	delete(env, "ATRIUM_CATALOG_WATCH")
	changed, err = r.Reload()
	require.NoError(t, err)
	require.Equal(t, map[string]any{"cache-ttl": 5 * time.Minute, "catalog-watch": false, "max-connections": 100}, changed)

	unsubscribe()
	write("serve:\n  max-connections: 30\n")
	_, err = r.Reload()
	require.NoError(t, err)
	require.Len(t, got, 2)

	// The live flag set is untouched: subscribers apply values.
	require.Equal(t, "1m0s", value(fs, "cache-ttl"))

	_, err = st.reloader("no-such-flag")
	require.Error(t, err)
}

// recordingLog collects what the reload loop reports.
type recordingLog struct{ msgs chan string }

func (l recordingLog) Info(msg string, _ ...any)  { l.msgs <- msg }
func (l recordingLog) Error(msg string, _ ...any) { l.msgs <- msg }

func TestReloadOnSignal(t *testing.T) {
	file := filepath.Join(t.TempDir(), "atrium.yaml")
	require.NoError(t, os.WriteFile(file, []byte("cache-ttl: 1m\n"), 0o600))
	fs := testFlags("serve")
	addConfigFlag(fs)
	require.NoError(t, fs.Parse([]string{"--config", file}))
	st, err := resolveSettings(envFrom(nil), fs, testKnown)
	require.NoError(t, err)
	r, err := st.reloader("cache-ttl")
	require.NoError(t, err)
	changes := make(chan map[string]any, 1)
	r.Subscribe(func(c map[string]any) { changes <- c })

	ctx, cancel := context.WithCancel(context.Background())
	hup := make(chan os.Signal, 1)
	log := recordingLog{msgs: make(chan string, 4)}
	done := make(chan struct{})
	go func() { defer close(done); r.runOn(ctx, hup, log) }()

	require.NoError(t, os.WriteFile(file, []byte("cache-ttl: 3m\n"), 0o600))
	hup <- syscall.SIGHUP
	require.Equal(t, map[string]any{"cache-ttl": 3 * time.Minute}, <-changes)
	require.Equal(t, "configuration reloaded", <-log.msgs)

	require.NoError(t, os.WriteFile(file, []byte("cache-ttl: never\n"), 0o600))
	hup <- syscall.SIGHUP
	require.Contains(t, <-log.msgs, "failed")
	cancel()
	<-done
}

func TestConfigPrintAndCheck(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "atrium.yaml")
	require.NoError(t, os.WriteFile(file, []byte("config:\n  print:\n    json: true\n"), 0o600))

	var out, errOut bytes.Buffer
	env := &cliEnv{stdout: &out, stderr: &errOut, getenv: func(string) string { return "" }}
	require.NoError(t, runConfig(context.Background(), env, []string{"check", "--config", file}))
	require.Contains(t, out.String(), "configuration OK")

	out.Reset()
	require.NoError(t, runConfig(context.Background(), env, []string{"print", "--config", file}))
	require.Contains(t, out.String(), `"config_file": "`+file) // the file made print use JSON
	out.Reset()
	require.NoError(t, runConfig(context.Background(), env, []string{"print"}))
	require.Contains(t, out.String(), "# Effective configuration")

	// The file's own setting applies to config print itself.
	out.Reset()
	require.NoError(t, runConfig(context.Background(), env, []string{"print", "--config", file, "config", "print"}))
	require.Contains(t, out.String(), `"json"`)

	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("config:\n  print:\n    json: maybe\n"), 0o600))
	err := runConfig(context.Background(), env, []string{"check", "--config", bad})
	require.ErrorContains(t, err, `"json"`)

	require.ErrorAs(t, runConfig(context.Background(), env, []string{"frobnicate"}), new(usageError))
	require.ErrorAs(t, runConfig(context.Background(), env, []string{"print", "no-such-command"}), new(usageError))
}

// TestExampleConfigUpToDate keeps deploy/atrium.example.yaml identical to
// what `atrium config example` generates from the real flag sets, and
// checks that the example itself is a valid configuration for every
// command.
func TestExampleConfigUpToDate(t *testing.T) {
	ctx := context.Background()
	want, err := exampleConfig(ctx, envFrom(nil))
	require.NoError(t, err)
	path := filepath.Join("..", "..", "deploy", "atrium.example.yaml")
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(want), string(got),
		"deploy/atrium.example.yaml is stale: run `go run ./cmd/atrium config example > deploy/atrium.example.yaml`")

	cf, err := parseConfigFile(path, got)
	require.NoError(t, err)
	require.NoError(t, cf.checkAgainst(knownFlags(ctx, envFrom(nil))))
	var out bytes.Buffer
	env := &cliEnv{stdout: &out, stderr: io.Discard, getenv: func(string) string { return "" }}
	require.NoError(t, runConfig(ctx, env, []string{"check", "--config", path}))
}
