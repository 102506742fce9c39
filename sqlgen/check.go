package sqlgen

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/atriumdb/atrium/proxy"
)

// Validated is SQL that came from a person rather than the LLM (a
// corrected SQL given as feedback, an answer confirmed as good) and passed
// the same checks generated SQL passes.
type Validated struct {
	// SQL is the one statement's text, without a trailing semicolon.
	SQL string
	// Tables are the relations it names, resolved on the session and
	// written schema.table (the form retrieval and the query log use),
	// sorted.
	Tables []string
	// Fields is its row description.
	Fields []pgproto3.FieldDescription
}

// ValidateOnSession checks sql exactly as generated SQL is checked before
// it runs: PostgreSQL's parser accepts one read-only SELECT (Check), every
// function and operator it calls is on the allow-list in the session's own
// catalog (checkCalls), and EXPLAIN and Describe succeed on the client's
// session under its role, privileges and search_path. Nothing is executed:
// all of it happens inside a read-only scope that is rolled back (a
// savepoint when the client is in a transaction block, which is left as it
// was). statementTimeout bounds each statement of the check.
//
// Errors are *proxy.Error (42601, 0A000, 25P02) or the server's own
// *proxy.UpstreamError (42501 for a table the role may not read, 42P01,
// ...), as for generated SQL; their messages say "SQL", not "generated
// SQL".
func ValidateOnSession(ctx context.Context, up proxy.Upstream, sql string, statementTimeout time.Duration) (*Validated, error) {
	checked, err := Check(sql)
	if err != nil {
		return nil, reword(err)
	}
	sc, err := openScope(ctx, up, statementTimeout)
	if err != nil {
		return nil, err
	}
	v, err := validateIn(ctx, sc, checked)
	if cerr := sc.close(ctx); cerr != nil && err == nil {
		err = cerr
	}
	if err != nil {
		return nil, reword(err)
	}
	return v, nil
}

func validateIn(ctx context.Context, sc *scope, checked *Checked) (*Validated, error) {
	fields, err := validate(ctx, sc, checked.SQL)
	if err != nil {
		return nil, err
	}
	v := &Validated{SQL: checked.SQL, Fields: fields}
	src, err := ReadSources(checked.SQL)
	if err != nil || len(src.Relations) == 0 {
		return v, nil
	}
	// The names as written resolve through the session's search_path;
	// EXPLAIN has just shown they exist.
	res, err := sc.query(ctx, "SELECT DISTINCT n.nspname || '.' || c.relname FROM unnest("+textArray(setOf(src.Relations), same)+
		"::text[]) AS r JOIN pg_catalog.pg_class c ON c.oid = pg_catalog.to_regclass(r) JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace ORDER BY 1")
	if err != nil {
		return nil, err
	}
	for _, row := range res.Rows {
		if len(row) == 1 && row[0] != nil {
			v.Tables = append(v.Tables, string(row[0]))
		}
	}
	return v, nil
}

// reword makes Check's and checkCalls' messages, written for SQL the LLM
// generated, speak of the SQL a person gave.
func reword(err error) error {
	var pe *proxy.Error
	if !errors.As(err, &pe) {
		return err
	}
	msg := pe.Message
	if rest, ok := strings.CutPrefix(msg, "generated SQL "); ok {
		msg = "the SQL " + rest
	} else if msg == "the LLM returned no SQL statement" {
		msg = "no SQL statement given"
	}
	out := *pe
	out.Message = msg
	return &out
}
