package sqlgen

import (
	"context"
	"time"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/atriumdb/atrium/proxy"
)

// CheckedExample is a curated example's SQL that passed CheckExample.
type CheckedExample struct {
	// SQL is the one statement's text, trimmed, without a trailing
	// semicolon: what atrium.examples stores.
	SQL string
	// Tables are the relations it reads, resolved on the checking
	// session (its search_path) to schema.table, unquoted as
	// atrium.tables names them, sorted. CTE names are not relations.
	Tables []string
}

// exampleTimeout bounds each statement CheckExample runs when the caller
// gives no timeout: EXPLAIN plans, it computes no rows.
const exampleTimeout = 30 * time.Second

// CheckExample validates sql as the SQL of a curated example
// (atrium.examples) on the session up, with the same checks generated SQL
// gets on a client's session: exactly one read-only SELECT (WITH ... SELECT,
// set operations and VALUES included) that parses with PostgreSQL's parser,
// calls only allowed functions (resolved in the session's catalog), and
// passes EXPLAIN under the session's role, privileges and search_path. It
// all runs inside a READ ONLY transaction (or a savepoint, when up is inside
// one) that is rolled back, so nothing the session could change stays
// changed. It then lists the relations the SQL reads (PostgreSQL's parse
// tree, CTE names scoped; see ReadSources), resolved on that session.
//
// statementTimeout bounds each statement (0: 30s). Errors are *proxy.Error
// (42601 syntax, 0A000 not a single read-only query) or the server's own
// *proxy.UpstreamError (42501 permission denied, 42P01 unknown table...),
// so callers can report the SQLSTATE.
func CheckExample(ctx context.Context, up proxy.Upstream, sql string, statementTimeout time.Duration) (*CheckedExample, error) {
	// Check's own message for no statement speaks of the LLM.
	if res, err := pg_query.Parse(sql); err == nil && len(res.GetStmts()) == 0 {
		return nil, errorf(CodeSyntax, "the SQL holds no statement")
	}
	if statementTimeout <= 0 {
		statementTimeout = exampleTimeout
	}
	// The same check a corrected SQL in feedback gets: the example is
	// what a curator vouches for, on their own session.
	v, err := ValidateOnSession(ctx, up, sql, statementTimeout)
	if err != nil {
		return nil, err
	}
	out := &CheckedExample{SQL: v.SQL, Tables: v.Tables}
	if out.Tables == nil {
		out.Tables = []string{}
	}
	return out, nil
}
