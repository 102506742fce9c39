package question

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/atriumdb/atrium/proxy"
	"github.com/atriumdb/atrium/retriever"
)

// privilegeSQL asks, in one statement, what the session's role may read of
// the tables ($1 schemas, $2 names, in order): one row per readable column
// (n, readable, row_security, column), or one row with a NULL column when
// none is. A table is readable with SELECT on it or on any of its columns
// and USAGE on its schema. row_security is true when RLS is enabled or
// forced on it or on any relation a view reads, recursively (pg_rewrite and
// pg_depend): what the sync role sampled through such a view holds other
// sessions' rows. A table dropped since the catalog was built (or in a
// schema the role may not use) reads as not readable. pg_class is joined by
// name rather than through to_regclass, which fails the whole statement on
// a schema the role has no USAGE on.
const privilegeSQL = `WITH RECURSIVE r AS (
  SELECT u.n, ns.oid AS nsp, c.oid
  FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS u(s, t, n)
  LEFT JOIN pg_catalog.pg_namespace ns ON ns.nspname = u.s
  LEFT JOIN pg_catalog.pg_class c ON c.relnamespace = ns.oid AND c.relname = u.t
), dep(n, oid) AS (
  SELECT n, oid FROM r WHERE oid IS NOT NULL
  UNION
  SELECT dep.n, d.refobjid FROM dep
  JOIN pg_catalog.pg_rewrite w ON w.ev_class = dep.oid
  JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass AND d.objid = w.oid
    AND d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass AND d.refobjid <> dep.oid
), rls AS (
  SELECT dep.n, pg_catalog.bool_or(c.relrowsecurity OR c.relforcerowsecurity) AS on
  FROM dep JOIN pg_catalog.pg_class c ON c.oid = dep.oid GROUP BY dep.n
)
SELECT r.n,
  coalesce(pg_catalog.has_schema_privilege(r.nsp, 'USAGE') AND pg_catalog.has_any_column_privilege(r.oid, 'SELECT'), false),
  coalesce(rls.on, true),
  a.attname
FROM r
LEFT JOIN rls ON rls.n = r.n
LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid = r.oid AND a.attnum > 0 AND NOT a.attisdropped
  AND pg_catalog.has_schema_privilege(r.nsp, 'USAGE')
  AND pg_catalog.has_column_privilege(r.oid, a.attnum, 'SELECT')
ORDER BY r.n, a.attnum`

// access is what the asking role may read of one table.
type access struct {
	readable    bool
	rowSecurity bool
	columns     map[string]bool
}

// Readable cuts res down to what the role of the client session behind up
// may read, before anything of it reaches a prompt, a NOTICE, an error, the
// cache or the query log. It is the one privilege decision for every
// question form (RETRIEVE and nl alike):
//
//   - a table the role cannot SELECT from (on the table or any column) is
//     dropped, with the join paths and value hits that touch it, and the
//     ranks are renumbered;
//   - of a readable table only the columns the role may SELECT are kept,
//     and join paths through other columns are dropped;
//   - values the catalog sync role sampled (value-index hits, sample
//     values) are kept only for readable columns, and never for a table
//     with row-level security, whose rows the sync role may see and the
//     asking role may not;
//   - a curated example, a glossary term or the previous turn of a
//     follow-up is kept only when the role may read every relation it
//     names (its tables and those its SQL reads); otherwise it is dropped
//     whole, so its SQL and text never reach a prompt or a NOTICE for
//     that role (readableLearned, a second round trip only when there is
//     any).
//
// Tables shared with the retriever's snapshot are never modified: a table
// that loses columns is copied. One round trip on the client's own
// connection, so its role, SET ROLE and grants apply. It fails closed: when
// the check cannot run (for instance the upstream is busy in an
// extended-protocol pipeline, SQLSTATE 0A000) the error is returned and
// nothing is shown.
func Readable(ctx context.Context, up proxy.Upstream, res *retriever.Result) (*retriever.Result, error) {
	out, err := readableTables(ctx, up, res)
	if err != nil {
		return nil, err
	}
	return readableLearned(ctx, up, out)
}

// readableTables is Readable for the ranked tables.
func readableTables(ctx context.Context, up proxy.Upstream, res *retriever.Result) (*retriever.Result, error) {
	if len(res.Tables) == 0 {
		return res, nil
	}
	schemas := make([]string, len(res.Tables))
	names := make([]string, len(res.Tables))
	for i, t := range res.Tables {
		schemas[i], names[i] = t.Table.Schema, t.Table.Name
	}
	var rows textRows
	if _, _, err := up.Stream(ctx, privilegeSQL, 0, &rows, []byte(textArray(schemas)), []byte(textArray(names))); err != nil {
		return nil, fmt.Errorf("check the client's table privileges: %w", err)
	}
	acc := make([]access, len(res.Tables))
	for _, r := range rows {
		if len(r) != 4 || r[0] == nil {
			return nil, fmt.Errorf("the privilege check returned %d columns", len(r))
		}
		n, err := strconv.Atoi(string(r[0]))
		if err != nil || n < 1 || n > len(acc) {
			return nil, fmt.Errorf("the privilege check returned table %q of %d", r[0], len(acc))
		}
		a := &acc[n-1]
		a.readable = string(r[1]) == "t"
		a.rowSecurity = string(r[2]) != "f"
		if r[3] != nil {
			if a.columns == nil {
				a.columns = map[string]bool{}
			}
			a.columns[string(r[3])] = true
		}
	}

	// byTable maps the snapshot's tables to their access and, when they
	// lose columns or values, to the copy shown instead.
	type shown struct {
		a    *access
		copy *retriever.TableInfo
	}
	byTable := map[*retriever.TableInfo]*shown{}
	for i, t := range res.Tables {
		a := &acc[i]
		if !a.readable {
			a.columns = nil
		}
		sh := &shown{a: a, copy: t.Table}
		if a.readable {
			sh.copy = cutColumns(t.Table, a)
		}
		byTable[t.Table] = sh
	}
	readable := func(ti *retriever.TableInfo) bool {
		sh := byTable[ti]
		return sh != nil && sh.a.readable
	}
	joinVisible := func(jp retriever.JoinPath) bool {
		if !readable(jp.From) || !readable(jp.To) {
			return false
		}
		from, to := byTable[jp.From].a, byTable[jp.To].a
		for _, c := range jp.FromCols {
			if !from.columns[c] {
				return false
			}
		}
		for _, c := range jp.ToCols {
			if !to.columns[c] {
				return false
			}
		}
		return true
	}
	visible := func(jps []retriever.JoinPath) []retriever.JoinPath {
		var out []retriever.JoinPath
		for _, jp := range jps {
			if joinVisible(jp) {
				jp.From, jp.To = byTable[jp.From].copy, byTable[jp.To].copy
				out = append(out, jp)
			}
		}
		return out
	}
	values := func(a *access, hits []retriever.ValueHit) []retriever.ValueHit {
		if a.rowSecurity {
			return nil
		}
		var out []retriever.ValueHit
		for _, v := range hits {
			if a.columns[v.Column] {
				out = append(out, v)
			}
		}
		return out
	}

	out := *res
	out.Tables = make([]retriever.ResultTable, 0, len(res.Tables))
	for _, t := range res.Tables {
		sh := byTable[t.Table]
		if !sh.a.readable {
			continue
		}
		t.Table = sh.copy
		t.Rank = len(out.Tables) + 1
		t.JoinPaths = visible(t.JoinPaths)
		t.Values = values(sh.a, t.Values)
		out.Tables = append(out.Tables, t)
	}
	out.JoinPaths = visible(res.JoinPaths)
	// The hybrid and ATR lists name tables outside the result too: keep
	// only tables known readable.
	out.Candidates = nil
	for _, c := range res.Candidates {
		if readable(c.Table) {
			cc := *c
			cc.Table = byTable[c.Table].copy
			cc.Values = values(byTable[c.Table].a, c.Values)
			out.Candidates = append(out.Candidates, &cc)
		}
	}
	out.ATR = nil
	for _, ti := range res.ATR {
		if readable(ti) {
			out.ATR = append(out.ATR, byTable[ti].copy)
		}
	}
	return &out, nil
}

// cutColumns returns t, or a copy of it without the columns the role may
// not read and without what the sync role derived from rows the asking
// role may not see: for a table with row-level security, sample values and
// the descriptions (table purpose, column descriptions) a describer wrote
// from sampled rows; its own COMMENTs stay.
func cutColumns(t *retriever.TableInfo, a *access) *retriever.TableInfo {
	same := !a.rowSecurity || t.Purpose == ""
	for _, c := range t.Columns {
		if !a.columns[c.Name] || (a.rowSecurity && (len(c.SampleValues) > 0 || c.Description != "")) {
			same = false
			break
		}
	}
	if same {
		return t
	}
	c := *t
	if a.rowSecurity {
		c.Purpose = ""
	}
	c.Columns = make([]retriever.ColumnInfo, 0, len(t.Columns))
	for _, col := range t.Columns {
		if !a.columns[col.Name] {
			continue
		}
		if a.rowSecurity {
			col.SampleValues, col.Description = nil, ""
		}
		c.Columns = append(c.Columns, col)
	}
	return &c
}

// textRows collects a result in text format.
type textRows [][][]byte

func (r *textRows) Notice(*pgproto3.NoticeResponse) error    { return nil }
func (r *textRows) Fields([]pgproto3.FieldDescription) error { return nil }
func (r *textRows) Row(v [][]byte) error {
	row := make([][]byte, len(v))
	for i, b := range v {
		if b != nil {
			row[i] = append([]byte{}, b...)
		}
	}
	*r = append(*r, row)
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
