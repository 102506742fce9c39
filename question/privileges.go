package question

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/atriumdb/atrium/proxy"
	"github.com/atriumdb/atrium/retriever"
)

// privilegeSQL asks, in one statement, which of the tables ($1 schemas, $2
// names, in order) the session's role can read: SELECT on the table or on
// any of its columns. A table dropped since the catalog was built reads as
// not readable.
const privilegeSQL = `SELECT coalesce(has_any_column_privilege(to_regclass(format('%I.%I', u.s, u.t)), 'SELECT'), false)
FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS u(s, t, n) ORDER BY u.n`

// Readable removes from res the tables that the role of the client
// session behind up cannot read, with the join paths that touch them, and
// renumbers the ranks. It is the one privilege decision for every question
// form: RETRIEVE and nl questions both see only what it keeps. One round trip on the client's own connection, so
// its role, SET ROLE and grants apply. It fails closed: when the check
// cannot run (for instance the upstream is busy in an extended-protocol
// pipeline, SQLSTATE 0A000) the error is returned and nothing is shown.
func Readable(ctx context.Context, up proxy.Upstream, res *retriever.Result) (*retriever.Result, error) {
	if len(res.Tables) == 0 {
		return res, nil
	}
	schemas := make([]string, len(res.Tables))
	names := make([]string, len(res.Tables))
	for i, t := range res.Tables {
		schemas[i], names[i] = t.Table.Schema, t.Table.Name
	}
	var ok boolRows
	if _, _, err := up.Stream(ctx, privilegeSQL, 0, &ok, []byte(textArray(schemas)), []byte(textArray(names))); err != nil {
		return nil, fmt.Errorf("check the client's table privileges: %w", err)
	}
	if len(ok) != len(res.Tables) {
		return nil, fmt.Errorf("the privilege check returned %d rows for %d tables", len(ok), len(res.Tables))
	}
	hidden := map[*retriever.TableInfo]bool{}
	kept := res.Tables[:0]
	for i, t := range res.Tables {
		if !ok[i] {
			hidden[t.Table] = true
			continue
		}
		kept = append(kept, t)
	}
	if len(hidden) == 0 {
		return res, nil
	}
	res.Tables = kept
	visible := func(jps []retriever.JoinPath) []retriever.JoinPath {
		var out []retriever.JoinPath
		for _, jp := range jps {
			if !hidden[jp.From] && !hidden[jp.To] {
				out = append(out, jp)
			}
		}
		return out
	}
	for i := range res.Tables {
		res.Tables[i].Rank = i + 1
		res.Tables[i].JoinPaths = visible(res.Tables[i].JoinPaths)
	}
	res.JoinPaths = visible(res.JoinPaths)
	return res, nil
}

// boolRows collects a one-column boolean result in text format.
type boolRows []bool

func (b *boolRows) Notice(*pgproto3.NoticeResponse) error    { return nil }
func (b *boolRows) Fields([]pgproto3.FieldDescription) error { return nil }
func (b *boolRows) Row(v [][]byte) error {
	if len(v) != 1 {
		return fmt.Errorf("privilege check: %d columns", len(v))
	}
	*b = append(*b, string(v[0]) == "t")
	return nil
}

// textArray renders ss as a text[] value in PostgreSQL's text format, every
// element quoted, so any name round-trips.
func textArray(ss []string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, s := range ss {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		for _, r := range s {
			if r == '"' || r == '\\' {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		}
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}
