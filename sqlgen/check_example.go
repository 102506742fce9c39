package sqlgen

import (
	"context"
	"fmt"
	"sort"
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

// resolveTablesSQL maps each relation name as written (quoted, qualified
// when written so) to schema.table on the session's search_path. $1 is a
// text[] literal; a name that does not resolve comes back NULL.
const resolveTablesSQL = `SELECT r, n.nspname || '.' || c.relname
FROM pg_catalog.unnest(%s::text[]) AS r
LEFT JOIN pg_catalog.pg_class c ON c.oid = pg_catalog.to_regclass(r)
LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace`

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
	checked, err := Check(sql)
	if err != nil {
		return nil, reword(err)
	}
	sc, err := openScope(ctx, up, statementTimeout)
	if err != nil {
		return nil, err
	}
	out, err := checkExampleIn(ctx, sc, checked.SQL)
	if cerr := sc.close(ctx); err == nil && cerr != nil {
		return nil, cerr
	}
	if err != nil {
		return nil, reword(err)
	}
	return out, nil
}

func checkExampleIn(ctx context.Context, sc *scope, sql string) (*CheckedExample, error) {
	if _, err := validate(ctx, sc, sql); err != nil {
		return nil, err
	}
	src, err := ReadSources(sql)
	if err != nil {
		return nil, &proxy.Error{Code: CodeSyntax, Message: "the SQL does not parse: " + err.Error(), Err: err}
	}
	out := &CheckedExample{SQL: sql, Tables: []string{}}
	if len(src.Relations) == 0 {
		return out, nil
	}
	res, err := sc.query(ctx, fmt.Sprintf(resolveTablesSQL, textArray(setOf(src.Relations), same)))
	if err != nil {
		return nil, fmt.Errorf("resolve the tables of the SQL: %w", err)
	}
	seen := map[string]bool{}
	for _, row := range res.Rows {
		if len(row) != 2 {
			return nil, errorf(CodeInternal, "unexpected answer to the table lookup")
		}
		if row[1] == nil {
			// EXPLAIN just resolved it; only a concurrent DROP gets here.
			return nil, errorf("42P01", "relation %s does not exist", string(row[0]))
		}
		if t := string(row[1]); !seen[t] {
			seen[t] = true
			out.Tables = append(out.Tables, t)
		}
	}
	sort.Strings(out.Tables)
	return out, nil
}
