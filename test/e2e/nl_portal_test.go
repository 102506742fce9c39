package e2e

import (
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/proxy"
	"github.com/atriumdb/atrium/sqlgen"
	"github.com/atriumdb/atrium/test/llmfake"
)

// A question fetched with a row limit per Execute (JDBC's fetch size,
// psycopg's named cursors) holds at most --max-portal-buffer bytes of rows
// between fetches; a larger result fails with 54000 instead of growing the
// proxy without bound (issue 11: 400 rows of 1 MB took it from 35 MB to
// 553 MB RSS). Smaller results are fetched in parts as before.
func TestNLSuspendedPortalIsBounded(t *testing.T) {
	e := startNL(t, nlOpts{cfg: sqlgen.Config{RowLimit: 1000}, proxyCfg: proxy.Config{MaxPortalBuffer: 8 << 20}})
	e.llm.SetRules(append([]llmfake.Rule{
		// 60 rows of 1 MB.
		{Question: "padded customers", SQL: "SELECT c.id, repeat('x', 1000000) AS pad FROM shop.customers c CROSS JOIN generate_series(1, 20) g ORDER BY c.id"},
	}, nlRules()...)...)
	r := dialRaw(t, e.px.addr)
	r.startup(pgproto3.ProtocolVersion30, dbParams(t, e.db))
	fetch := func(q string, maxRows uint32, executes int) (types string, errs []*pgproto3.ErrorResponse) {
		msgs := []pgproto3.FrontendMessage{&pgproto3.Parse{Query: q}, &pgproto3.Bind{}}
		for range executes {
			msgs = append(msgs, &pgproto3.Execute{MaxRows: maxRows})
		}
		r.send(append(msgs, &pgproto3.Sync{})...)
		for {
			m, err := r.recv()
			require.NoError(t, err)
			b, err := m.Encode(nil)
			require.NoError(t, err)
			if b[0] != 'N' { // notices (e.g. about the LLM) are beside the point
				types += string(b[0])
			}
			if e, ok := m.(*pgproto3.ErrorResponse); ok {
				cp := *e
				errs = append(errs, &cp)
			}
			if _, ok := m.(*pgproto3.ReadyForQuery); ok {
				return types, errs
			}
		}
	}

	types, errs := fetch("/* nl: padded customers */", 5, 2)
	require.Len(t, errs, 1, types)
	require.Equal(t, "54000", errs[0].Code)
	require.Equal(t, "12DDDDDEZ", types, "the first fetch's rows stream, then the result is refused")

	types, errs = fetch("/* nl: customer names */", 2, 2)
	require.Empty(t, errs)
	require.Equal(t, "12DDsDCZ", types)
}
