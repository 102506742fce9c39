package e2e

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/atriumdb/atrium/proxy"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"
)

// TestProxyAuth authenticates through Atrium against a throwaway cluster
// that demands scram-sha-256, md5 and cleartext passwords, with and without
// TLS on the upstream leg.
func TestProxyAuth(t *testing.T) {
	certDir, err := os.MkdirTemp("", "atrium-pgcert-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(certDir) })
	require.NoError(t, os.Chmod(certDir, 0o755))
	cert, key := writeSelfSigned(t, certDir)
	chownToPostgres(t, cert, key)

	cl := newCluster(t, []string{
		"host all scram_user 127.0.0.1/32 scram-sha-256",
		"host all md5_user 127.0.0.1/32 md5",
		"host all pw_user 127.0.0.1/32 password",
		"host all postgres 127.0.0.1/32 trust",
	}, []string{
		"ssl = on",
		fmt.Sprintf("ssl_cert_file = '%s'", cert),
		fmt.Sprintf("ssl_key_file = '%s'", key),
	})
	cl.sql(t, `CREATE ROLE scram_user LOGIN PASSWORD 'scram secret'`)
	cl.sql(t, `SET password_encryption = 'md5'; CREATE ROLE md5_user LOGIN PASSWORD 'md5 secret'`)
	cl.sql(t, `CREATE ROLE pw_user LOGIN PASSWORD 'plain secret'`)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	proxyCert, proxyKey := writeSelfSigned(t, t.TempDir())
	plainUp := startProxy(t, proxyOpts{cfg: proxy.Config{Upstream: cl.addr(), UpstreamSSLMode: "disable"}})
	tlsUp := startProxy(t, proxyOpts{cfg: proxy.Config{Upstream: cl.addr(), UpstreamSSLMode: "require", TLSCert: proxyCert, TLSKey: proxyKey}})

	conninfo := func(p *testProxy, user, pw string, extra ...string) string {
		q := url.Values{"sslmode": {"disable"}}
		for i := 0; i+1 < len(extra); i += 2 {
			q.Set(extra[i], extra[i+1])
		}
		u := url.URL{Scheme: "postgres", User: url.UserPassword(user, pw), Host: p.addr, Path: "/postgres", RawQuery: q.Encode()}
		return u.String()
	}

	for _, tc := range []struct{ user, pw string }{
		{"scram_user", "scram secret"},
		{"md5_user", "md5 secret"},
		{"pw_user", "plain secret"},
	} {
		for name, p := range map[string]*testProxy{"plain upstream": plainUp, "tls upstream": tlsUp} {
			t.Run(tc.user+"/"+name, func(t *testing.T) {
				out, err := psqlCmd(ctx, conninfo(p, tc.user, tc.pw), "-At", "-c", "SELECT current_user", "-c", "SHOW atrium.version").CombinedOutput()
				require.NoError(t, err, "%s", out)
				require.Equal(t, tc.user+"\ntest-version\n", string(out))

				c, err := pgx.Connect(ctx, conninfo(p, tc.user, tc.pw))
				require.NoError(t, err)
				var u string
				require.NoError(t, c.QueryRow(ctx, "SELECT current_user").Scan(&u))
				require.Equal(t, tc.user, u)
				require.NoError(t, c.Close(ctx))

				_, err = pgx.Connect(ctx, conninfo(p, tc.user, "wrong"))
				var pe *pgconn.PgError
				require.ErrorAs(t, err, &pe)
				require.Equal(t, "28P01", pe.Code)
			})
		}
	}

	t.Run("channel_binding=require is refused clearly", func(t *testing.T) {
		out, err := psqlCmd(ctx, conninfo(tlsUp, "scram_user", "scram secret", "sslmode", "require", "channel_binding", "require"), "-c", "SELECT 1").CombinedOutput()
		require.Error(t, err)
		require.Contains(t, string(out), "channel binding")
	})

	t.Run("TLS on both legs needs channel_binding=disable", func(t *testing.T) {
		out, err := psqlCmd(ctx, conninfo(tlsUp, "scram_user", "scram secret", "sslmode", "require"), "-c", "SELECT 1").CombinedOutput()
		require.Error(t, err)
		require.Contains(t, string(out), "SCRAM channel binding negotiation cannot pass through Atrium")
		require.Contains(t, string(out), "channel_binding=disable")

		out, err = psqlCmd(ctx, conninfo(tlsUp, "scram_user", "scram secret", "sslmode", "require", "channel_binding", "disable"), "-At", "-c", "SELECT current_user").CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Equal(t, "scram_user\n", string(out))
	})

	t.Run("no credentials are kept", func(t *testing.T) {
		// Atrium has no password store; a second connection must
		// authenticate again, and without a password it fails.
		_, err := pgx.Connect(ctx, fmt.Sprintf("postgres://scram_user@%s/postgres?sslmode=disable", plainUp.addr))
		require.Error(t, err)
	})
}
