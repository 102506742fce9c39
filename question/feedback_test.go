package question

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/proxy/resultcache"
	"github.com/atriumdb/atrium/sqlgen"
	"github.com/atriumdb/atrium/test/llmfake"
)

// The feedback tests run a real proxy in front of a throwaway database
// holding the shop fixture and the Atrium catalog (so atrium.feedback and
// atrium.examples are in the same database); only the LLM is a test double
// (llmfake), whose calls they count.

const fbQuestion = "/* nl: customers in Aruba */"

func fbRules() []llmfake.Rule {
	return []llmfake.Rule{
		{Question: "customers in Aruba", SQL: "SELECT full_name FROM shop.customers WHERE city = 'Aruba' ORDER BY 1"},
	}
}

// fbGrants lets a role read customers and orders, not products.
const fbGrants = "GRANT USAGE ON SCHEMA shop TO %[1]s; GRANT SELECT ON shop.customers, shop.orders TO %[1]s"

type fbEnv struct {
	*env
	mu   sync.Mutex
	recs []sqlgen.QuestionRecord
}

// newFeedbackEnv starts the question layer with feedback recorded in the
// test database (FeedbackDB over its pool) and curator as the curator role.
func newFeedbackEnv(t *testing.T, store resultcache.Store, curator string) *fbEnv {
	t.Helper()
	fe := &fbEnv{}
	var pool *fbPool
	fe.env = newEnv(t, envOpts{rules: fbRules(), store: store,
		onQuestion: func(_ context.Context, r sqlgen.QuestionRecord) {
			fe.mu.Lock()
			fe.recs = append(fe.recs, r)
			fe.mu.Unlock()
		},
		configure: func(cfg *Config, opts *Options) {
			pool = &fbPool{}
			opts.Feedback = NewFeedbackDB(pool)
			cfg.Feedback.CuratorRole = curator
		}})
	pool.env = fe.env
	return fe
}

// fbPool hands FeedbackDB the env's pool once newEnv has made it.
type fbPool struct{ env *env }

func (p *fbPool) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return p.env.pool.QueryRow(ctx, sql, args...)
}

func (fe *fbEnv) lastRequestID(t *testing.T) string {
	t.Helper()
	fe.mu.Lock()
	defer fe.mu.Unlock()
	require.NotEmpty(t, fe.recs)
	return fe.recs[len(fe.recs)-1].RequestID
}

// fbRow is an atrium.feedback row.
type fbRow struct {
	id                                       int64
	requestID, database, role, app, question string
	sql, hint, corrected                     *string
	tables                                   []string
	verdict                                  string
	candidate                                bool
	exampleID                                *int64
}

func (fe *fbEnv) feedbackRows(t *testing.T) []fbRow {
	t.Helper()
	rows, err := fe.pool.Query(context.Background(), `SELECT id, request_id, database_name, role_name, application_name, question,
  sql, hint, corrected_sql, tables, verdict, candidate, example_id FROM atrium.feedback ORDER BY id`)
	require.NoError(t, err)
	defer rows.Close()
	var out []fbRow
	for rows.Next() {
		var r fbRow
		require.NoError(t, rows.Scan(&r.id, &r.requestID, &r.database, &r.role, &r.app, &r.question,
			&r.sql, &r.hint, &r.corrected, &r.tables, &r.verdict, &r.candidate, &r.exampleID))
		out = append(out, r)
	}
	require.NoError(t, rows.Err())
	return out
}

func str(p *string) string {
	if p == nil {
		return "<NULL>"
	}
	return *p
}

// TestFeedbackGood: "good" after an answered question records one row
// against that question's request id, with its SQL and the tables the SQL
// reads, as a candidate; the reply is one row and a NOTICE saying how to
// promote it, and promote_feedback turns it into an example.
func TestFeedbackGood(t *testing.T) {
	fe := newFeedbackEnv(t, nil, "")
	role := fe.newRole(t, fbGrants)
	c := fe.connect(t, role)
	a := c.ask(t, fbQuestion)
	require.Nil(t, a.err)
	require.Equal(t, [][]string{{"Kyle Smith"}}, a.rows)
	reqID := fe.lastRequestID(t)

	a = c.ask(t, "/* nl-feedback: good */")
	require.Nil(t, a.err)
	require.Len(t, a.rows, 1)
	rows := fe.feedbackRows(t)
	require.Len(t, rows, 1)
	r := rows[0]
	require.Equal(t, []string{fmt.Sprint(r.id), "good", "t", "", "f"}, a.rows[0])
	require.Equal(t, reqID, r.requestID)
	require.Equal(t, role, r.role)
	require.Equal(t, fe.pool.Config().ConnConfig.Database, r.database)
	require.Equal(t, "customers in Aruba", r.question)
	require.Equal(t, "SELECT full_name FROM shop.customers WHERE city = 'Aruba' ORDER BY 1", str(r.sql))
	require.Equal(t, []string{"shop.customers"}, r.tables)
	require.True(t, r.candidate)
	require.Nil(t, r.hint)
	require.Nil(t, r.corrected)
	require.Nil(t, r.exampleID)
	require.Contains(t, strings.Join(a.notices, "\n"), fmt.Sprintf("promote with SELECT atrium.promote_feedback(%d)", r.id))

	var ex int64
	require.NoError(t, fe.pool.QueryRow(context.Background(), "SELECT atrium.promote_feedback($1)", r.id).Scan(&ex))
	var q, sql, source string
	require.NoError(t, fe.pool.QueryRow(context.Background(), "SELECT question, sql, source FROM atrium.examples WHERE id = $1", ex).Scan(&q, &sql, &source))
	require.Equal(t, []string{"customers in Aruba", str(r.sql), "feedback"}, []string{q, sql, source})

	// pgx's default extended protocol gets the same answer.
	var id int64
	var verdict string
	var candidate, evicted bool
	var exampleID *int64
	require.NoError(t, c.QueryRow(context.Background(), "-- nl-feedback: GOOD").Scan(&id, &verdict, &candidate, &exampleID, &evicted))
	require.Equal(t, "good", verdict)
	require.True(t, candidate)
	require.Len(t, fe.feedbackRows(t), 2)
}

// TestFeedbackWrong: a corrected SQL that validates is stored as
// corrected_sql with its tables and is a candidate; words are a hint and
// not a candidate; a bare "wrong" is a verdict alone.
func TestFeedbackWrong(t *testing.T) {
	fe := newFeedbackEnv(t, nil, "")
	role := fe.newRole(t, fbGrants)
	c := fe.connect(t, role)
	require.Nil(t, c.ask(t, fbQuestion).err)

	a := c.ask(t, "/* nl-feedback: wrong — SELECT c.full_name FROM shop.customers c JOIN shop.orders o USING (customer_id) WHERE c.city = 'Aruba'; */")
	require.Nil(t, a.err)
	require.Equal(t, "t", a.rows[0][2], "candidate")
	a = c.ask(t, "-- nl-feedback: wrong: use net amount")
	require.Nil(t, a.err)
	require.Equal(t, "f", a.rows[0][2])
	require.Contains(t, strings.Join(a.notices, "\n"), "not a candidate")
	a = c.ask(t, "/* nl-feedback: Wrong */")
	require.Nil(t, a.err)

	rows := fe.feedbackRows(t)
	require.Len(t, rows, 3)
	require.Equal(t, "SELECT c.full_name FROM shop.customers c JOIN shop.orders o USING (customer_id) WHERE c.city = 'Aruba'", str(rows[0].corrected))
	require.Equal(t, []string{"shop.customers", "shop.orders"}, rows[0].tables)
	require.True(t, rows[0].candidate)
	require.Nil(t, rows[0].hint)
	require.Equal(t, "use net amount", str(rows[1].hint))
	require.Nil(t, rows[1].corrected)
	require.False(t, rows[1].candidate)
	require.Nil(t, rows[2].hint)
	require.Nil(t, rows[2].corrected)
	for _, r := range rows {
		require.Equal(t, "wrong", r.verdict)
		require.Equal(t, "customers in Aruba", r.question)
	}
}

// TestFeedbackCorrectedSQLRefused: a corrected SQL is checked exactly as
// generated SQL is, on the client's session: one that writes, holds two
// statements, calls a refused function or reads a table the role may not
// read is refused with the check's SQLSTATE and nothing is recorded; the
// client's session is left as it was.
func TestFeedbackCorrectedSQLRefused(t *testing.T) {
	fe := newFeedbackEnv(t, nil, "")
	role := fe.newRole(t, fbGrants)
	c := fe.connect(t, role)
	require.Nil(t, c.ask(t, fbQuestion).err)
	for _, tc := range []struct{ sql, code string }{
		{"DELETE FROM shop.customers", "0A000"},
		{"SELECT 1; SELECT 2", "0A000"},
		{"SELECT pg_advisory_lock(1)", "0A000"},
		{"SELECT title FROM shop.products", "42501"},
		{"SELECT nope FROM shop.customers", "42703"},
	} {
		a := c.ask(t, "/* nl-feedback: wrong — "+tc.sql+" */")
		require.NotNil(t, a.err, tc.sql)
		require.Equal(t, tc.code, a.err.Code, tc.sql+": "+a.err.Message)
		require.True(t, strings.HasPrefix(a.err.Message, "nl-feedback: corrected SQL refused: "), a.err.Message)
		require.NotContains(t, a.err.Message, "generated SQL")
		require.Contains(t, a.err.Hint, "Nothing was recorded")
	}
	require.Empty(t, fe.feedbackRows(t))
	var n int
	require.NoError(t, fe.pool.QueryRow(context.Background(), "SELECT count(*) FROM shop.customers").Scan(&n))
	require.Equal(t, 2, n, "the DELETE did not run")
	// The session is idle and usable, and the turn is still there.
	a := c.ask(t, "SELECT 1")
	require.Nil(t, a.err)
	require.Equal(t, byte('I'), c.PgConn().TxStatus())
	require.Nil(t, c.ask(t, "/* nl-feedback: good */").err)
	require.Len(t, fe.feedbackRows(t), 1)
}

// TestFeedbackNoQuestion: feedback before any question, and feedback on a
// new connection after the one that asked has ended, is 55000: a turn
// belongs to its session and is forgotten when it ends.
func TestFeedbackNoQuestion(t *testing.T) {
	fe := newFeedbackEnv(t, nil, "")
	role := fe.newRole(t, fbGrants)
	c := fe.connect(t, role)
	a := c.ask(t, "/* nl-feedback: good */")
	require.NotNil(t, a.err)
	require.Equal(t, "55000", a.err.Code)
	require.Equal(t, "nl-feedback: no question in this session to give feedback on", a.err.Message)

	require.Nil(t, c.ask(t, fbQuestion).err)
	other := fe.connect(t, role)
	require.Equal(t, "55000", other.ask(t, "/* nl-feedback: good */").err.Code, "another session's question is not this one's")
	require.Equal(t, 1, fe.h.turns.len())
	require.NoError(t, c.Close(context.Background()))
	require.Eventually(t, func() bool { return fe.h.turns.len() == 0 }, 10*time.Second, 10*time.Millisecond,
		"the ended session's turn is dropped")
	again := fe.connect(t, role)
	require.Equal(t, "55000", again.ask(t, "/* nl-feedback: wrong */").err.Code)
	require.Empty(t, fe.feedbackRows(t))
}

// TestFeedbackBadVerdict: anything but good or wrong is 22023 with a hint
// showing both forms.
func TestFeedbackBadVerdict(t *testing.T) {
	fe := newFeedbackEnv(t, nil, "")
	c := fe.connect(t, fe.newRole(t, fbGrants))
	require.Nil(t, c.ask(t, fbQuestion).err)
	a := c.ask(t, "/* nl-feedback: great */")
	require.NotNil(t, a.err)
	require.Equal(t, "22023", a.err.Code)
	require.Contains(t, a.err.Hint, "/* nl-feedback: good */")
	require.Empty(t, fe.feedbackRows(t))
}

// TestFeedbackCurator: with a curator role, a member's candidate is
// promoted at once (example_id in the reply and the row); a non-member's
// is not; a member's non-candidate is not.
func TestFeedbackCurator(t *testing.T) {
	curators := fmt.Sprintf("atrium_curators_%d", rand.Uint32())
	fe := newFeedbackEnv(t, nil, curators)
	_, err := fe.pool.Exec(context.Background(), "CREATE ROLE "+curators+" NOLOGIN")
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = fe.pool.Exec(context.Background(), "DROP ROLE "+curators) })
	member := fe.newRole(t, fbGrants+"; GRANT "+curators+" TO %[1]s")
	outsider := fe.newRole(t, fbGrants)

	m := fe.connect(t, member)
	require.Nil(t, m.ask(t, fbQuestion).err)
	a := m.ask(t, "/* nl-feedback: good */")
	require.Nil(t, a.err)
	require.NotEmpty(t, a.rows[0][3], "promoted: example_id set")
	require.Contains(t, strings.Join(a.notices, "\n"), "promoted to example "+a.rows[0][3])
	a = m.ask(t, "/* nl-feedback: wrong — use net amount */")
	require.Nil(t, a.err)
	require.Empty(t, a.rows[0][3], "a hint is not promoted")

	o := fe.connect(t, outsider)
	require.Nil(t, o.ask(t, fbQuestion).err)
	a = o.ask(t, "/* nl-feedback: good */")
	require.Nil(t, a.err)
	require.Equal(t, "t", a.rows[0][2])
	require.Empty(t, a.rows[0][3], "a non-member's candidate waits for a curator")

	rows := fe.feedbackRows(t)
	require.Len(t, rows, 3)
	require.NotNil(t, rows[0].exampleID)
	require.Equal(t, a.rows[0][0], fmt.Sprint(rows[2].id))
	require.Nil(t, rows[2].exampleID)
	var n int
	require.NoError(t, fe.pool.QueryRow(context.Background(), "SELECT count(*) FROM atrium.examples WHERE source = 'feedback'").Scan(&n))
	require.Equal(t, 1, n)
}

// TestFeedbackCuratorRoleMissing: a curator role that does not exist means
// nobody curates; it is not an error, even inside the client's
// transaction.
func TestFeedbackCuratorRoleMissing(t *testing.T) {
	fe := newFeedbackEnv(t, nil, "atrium_no_such_role")
	c := fe.connect(t, fe.newRole(t, fbGrants))
	require.Nil(t, c.ask(t, "BEGIN").err)
	require.Nil(t, c.ask(t, fbQuestion).err)
	a := c.ask(t, "/* nl-feedback: good */")
	require.Nil(t, a.err)
	require.Empty(t, a.rows[0][3])
	require.Equal(t, byte('T'), c.PgConn().TxStatus())
	require.Nil(t, c.ask(t, "SELECT 1").err, "the client's transaction is intact")
	require.Nil(t, c.ask(t, "ROLLBACK").err)
}

// TestFeedbackWrongEvicts: marking a cached answer wrong evicts it from
// both tiers at once (in-process and Redis), so the next identical
// question calls the LLM again; "good" evicts nothing.
func TestFeedbackWrongEvicts(t *testing.T) {
	forEachCache(t, func(t *testing.T, store resultcache.Store) {
		fe := newFeedbackEnv(t, store, "")
		c := fe.connect(t, fe.newRole(t, fbGrants))
		require.Nil(t, c.ask(t, fbQuestion).err)
		require.Equal(t, 1, fe.llm.Calls())
		a := c.ask(t, fbQuestion)
		require.True(t, a.cached())
		require.Equal(t, 1, fe.llm.Calls())

		a = c.ask(t, "/* nl-feedback: good */")
		require.Nil(t, a.err)
		require.Equal(t, "f", a.rows[0][4], "good evicts nothing")
		require.True(t, c.ask(t, fbQuestion).cached())

		a = c.ask(t, "/* nl-feedback: wrong — use net amount */")
		require.Nil(t, a.err)
		require.Equal(t, "t", a.rows[0][4], "evicted")
		require.Contains(t, strings.Join(a.notices, "\n"), "the cached answer was evicted")

		a = c.ask(t, fbQuestion)
		require.Nil(t, a.err)
		require.False(t, a.cached())
		require.Equal(t, 2, fe.llm.Calls(), "the question was generated again")
	})
}

// TestFeedbackInTransaction: feedback inside the client's transaction
// block is recorded in the catalog database and stays recorded when the
// client rolls back; in a failed transaction it is 25P02.
func TestFeedbackInTransaction(t *testing.T) {
	fe := newFeedbackEnv(t, nil, "")
	c := fe.connect(t, fe.newRole(t, fbGrants))
	require.Nil(t, c.ask(t, "BEGIN").err)
	require.Nil(t, c.ask(t, fbQuestion).err)
	a := c.ask(t, "/* nl-feedback: wrong — SELECT full_name FROM shop.customers WHERE city = 'Aruba' */")
	require.Nil(t, a.err)
	require.Equal(t, byte('T'), c.PgConn().TxStatus())
	require.Nil(t, c.ask(t, "ROLLBACK").err)
	require.Len(t, fe.feedbackRows(t), 1, "recorded outside the client's transaction")

	require.Nil(t, c.ask(t, "BEGIN").err)
	require.NotNil(t, c.ask(t, "SELECT 1/0").err)
	a = c.ask(t, "/* nl-feedback: good */")
	require.NotNil(t, a.err)
	require.Equal(t, "25P02", a.err.Code)
	require.Nil(t, c.ask(t, "ROLLBACK").err)
	require.Len(t, fe.feedbackRows(t), 1)
}

// TestFeedbackOnRetrieveAndFailure: feedback on a RETRIEVE or on a
// question that failed is recorded but is no candidate (there is no
// answer's SQL); a corrected SQL still makes one.
func TestFeedbackOnRetrieveAndFailure(t *testing.T) {
	fe := newFeedbackEnv(t, nil, "")
	c := fe.connect(t, fe.newRole(t, fbGrants))
	require.Nil(t, c.ask(t, "RETRIEVE customers in Aruba").err)
	a := c.ask(t, "/* nl-feedback: good */")
	require.Nil(t, a.err)
	require.Equal(t, "f", a.rows[0][2])
	a = c.ask(t, "/* nl-feedback: wrong — SELECT full_name FROM shop.customers */")
	require.Nil(t, a.err)
	require.Equal(t, "t", a.rows[0][2], "a corrected SQL is a candidate for any question")

	require.NotNil(t, c.ask(t, "/* nl: */").err) // an empty question fails
	a = c.ask(t, "/* nl-feedback: good */")
	require.Nil(t, a.err)
	require.Equal(t, "f", a.rows[0][2])

	rows := fe.feedbackRows(t)
	require.Len(t, rows, 3)
	require.Equal(t, "customers in Aruba", rows[0].question)
	require.Nil(t, rows[0].sql)
	require.Nil(t, rows[2].sql)
}
