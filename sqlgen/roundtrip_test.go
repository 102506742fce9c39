package sqlgen

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/proxy"
	"github.com/atriumdb/atrium/test/llmfake"
	"github.com/atriumdb/atrium/test/testdb"
)

// countingUpstream counts the round trips a question makes on the client's
// session: each Query (one simple-protocol message, however many
// statements), Stream and Describe is one.
type countingUpstream struct {
	*pgUpstream
	n int
}

func (c *countingUpstream) Query(ctx context.Context, sql string) (*proxy.Result, error) {
	c.n++
	return c.pgUpstream.Query(ctx, sql)
}

func (c *countingUpstream) Stream(ctx context.Context, sql string, limit int, w proxy.RowWriter, params ...[]byte) (string, bool, error) {
	c.n++
	return c.pgUpstream.Stream(ctx, sql, limit, w, params...)
}

func (c *countingUpstream) Describe(ctx context.Context, sql string) ([]pgproto3.FieldDescription, error) {
	c.n++
	return c.pgUpstream.Describe(ctx, sql)
}

// TestIdentityRoundTrips pins how many round trips each question phase
// costs on the client's session: the asking identity rides on the
// statement that opens the read-only scope (or on the cached result's
// privilege check) instead of costing a round trip of its own.
func TestIdentityRoundTrips(t *testing.T) {
	e := newEnv(t, Config{SampleRows: -1},
		llmfake.Rule{Question: "orders per country", SQL: countByCountry},
		llmfake.Rule{Question: "how many customers", SQL: "SELECT count(*) FROM shop.customers"})
	up := &countingUpstream{pgUpstream: connectUpstream(t, e.dsn)}
	info := proxy.SessionInfo{ID: 7, User: "postgres"}
	run := func(q string) (describe, execute int) {
		t.Helper()
		st := e.p.Statement(info, q, false)
		up.n = 0
		_, err := st.Describe(context.Background(), up)
		require.NoError(t, err)
		describe = up.n
		up.n = 0
		_, err = st.Execute(context.Background(), up, &collector{})
		require.NoError(t, err)
		return describe, up.n
	}
	d1, x1 := run("orders per country") // first question of the session: generated
	d2, x2 := run("how many customers") // later question: generated, identity guessed
	d3, x3 := run("how many customers") // result cache
	t.Logf("round trips (describe+execute): first generated %d+%d, later generated %d+%d, cached %d+%d", d1, x1, d2, x2, d3, x3)
	// Execute of a just-described question: scope with identity, stream,
	// cacheable's catalog read, close.
	require.LessOrEqual(t, x1, 4, "execute of a generated question")
	require.LessOrEqual(t, x2, 4, "execute of a generated question")
	require.Less(t, d2, d1, "a later question reuses the session's identity guess, confirmed when the scope opens")
	require.Equal(t, 2, d3+x3, "a cached result: one privilege check at Describe, one again at Execute")
	// A stale guess: the session changed its TimeZone since its last
	// question. The scope's identity read catches it, the question is keyed
	// again, and the other session state's cached rows are not served.
	_, err := up.Query(context.Background(), "SET TimeZone = 'Asia/Tokyo'")
	require.NoError(t, err)
	st := e.p.Statement(info, "how many customers", false).(*statement)
	_, err = st.Describe(context.Background(), up)
	require.NoError(t, err)
	require.NotEqual(t, TierResult, st.tr.rec.CacheTier, "rows cached under UTC served to an Asia/Tokyo session")
	require.Contains(t, st.id.settings, "TimeZone=Asia/Tokyo")
	_, err = st.Execute(context.Background(), up, &collector{})
	require.NoError(t, err)

	// A stale guess with nothing cached under it: the statement opening
	// the generation's scope reads the new identity, and the question
	// starts again keyed on it.
	_, err = up.Query(context.Background(), "SET DateStyle = 'SQL, DMY'")
	require.NoError(t, err)
	st = e.p.Statement(info, "orders per country", true).(*statement)
	_, err = st.Describe(context.Background(), up)
	require.NoError(t, err)
	require.Contains(t, st.id.settings, "DateStyle=SQL, DMY")
	_, err = st.Execute(context.Background(), up, &collector{})
	require.NoError(t, err)
	requireUsable(t, up.pgUpstream, 'I')
}

// TestIdentityTellsRecreatedDatabaseApart: a database dropped and created
// again under the same name (a reloaded sample, a restored dump) is another
// identity, so the result cache cannot serve the old database's answers
// when the new catalog's version numbers come round to the old ones.
func TestIdentityTellsRecreatedDatabaseApart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dsn := testdb.New(t)
	name := dbName(t, dsn)
	up := connectUpstream(t, dsn)
	before, err := sessionIdentity(ctx, up)
	require.NoError(t, err)
	require.NoError(t, up.conn.Close(ctx))

	admin, err := pgx.Connect(ctx, testdb.AdminDSN())
	require.NoError(t, err)
	defer admin.Close(ctx)
	ident := pgx.Identifier{name}.Sanitize()
	_, err = admin.Exec(ctx, "DROP DATABASE "+ident+" WITH (FORCE)")
	require.NoError(t, err)
	_, err = admin.Exec(ctx, "CREATE DATABASE "+ident)
	require.NoError(t, err)

	after, err := sessionIdentity(ctx, connectUpstream(t, dsn))
	require.NoError(t, err)
	require.Equal(t, before.database, after.database)
	require.NotEqual(t, before, after, "same name, another database")
	require.Contains(t, after.settings, "database_oid=")
}
