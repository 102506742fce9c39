package question

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/atriumdb/atrium/proxy"
	"github.com/atriumdb/atrium/retriever"
	"github.com/atriumdb/atrium/sqlgen"
)

// relationsSQL asks whether the session's role may read each relation ($1
// schemas, "" for an unqualified name, which resolves through the
// session's search_path as the SQL would; $2 names): one row (n, readable)
// per relation, in order. Readable means USAGE on the schema and SELECT on
// the relation or any of its columns, as in privilegeSQL. A relation that
// does not exist reads as not readable. pg_class is joined by name, never
// through to_regclass, which fails the whole statement on a schema the role
// has no USAGE on.
const relationsSQL = `SELECT u.n, coalesce((
  SELECT pg_catalog.has_schema_privilege(ns.oid, 'USAGE') AND pg_catalog.has_any_column_privilege(c.oid, 'SELECT')
  FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace ns ON ns.oid = c.relnamespace
  WHERE c.relname = u.t
    AND CASE WHEN u.s = '' THEN ns.nspname = ANY (pg_catalog.current_schemas(true)) ELSE ns.nspname = u.s END
  ORDER BY pg_catalog.array_position(pg_catalog.current_schemas(true), ns.nspname) NULLS LAST
  LIMIT 1), false)
FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS u(s, t, n)
ORDER BY u.n`

// readableLearned drops the examples, glossary terms and previous turn of
// res that name a relation the session's role may not read: their tables
// as recorded, and for SQL (an example's, the previous turn's) the
// relations PostgreSQL's parser finds in it, so a wrong or empty tables
// column cannot let SQL through. An example whose SQL is not one read-only
// statement is dropped too: it could neither be reused nor serve as a
// pattern. A name that cannot be parsed counts as unreadable. One round
// trip on the client's session, only when there is anything to check; it
// fails closed like Readable.
func readableLearned(ctx context.Context, up proxy.Upstream, res *retriever.Result) (*retriever.Result, error) {
	if len(res.Examples) == 0 && len(res.Glossary) == 0 && res.Previous == nil {
		return res, nil
	}
	var (
		schemas, names []string
		index          = map[[2]string]int{}
	)
	// need lists, per item, the relations it names (indexes into
	// schemas/names); ok is false when one of them could not be parsed.
	type need struct {
		rels []int
		ok   bool
	}
	add := func(n *need, rel string) {
		s, t, ok := splitRelation(rel)
		if !ok {
			n.ok = false
			return
		}
		k := [2]string{s, t}
		i, seen := index[k]
		if !seen {
			i = len(schemas)
			index[k] = i
			schemas, names = append(schemas, s), append(names, t)
		}
		n.rels = append(n.rels, i)
	}
	withSQL := func(tables []string, sql string) need {
		n := need{ok: true}
		for _, t := range tables {
			add(&n, t)
		}
		if strings.TrimSpace(sql) != "" {
			c, err := sqlgen.Check(sql)
			if err != nil {
				return need{}
			}
			for _, r := range c.Relations {
				add(&n, r)
			}
		}
		return n
	}
	exNeeds := make([]need, len(res.Examples))
	for i, e := range res.Examples {
		exNeeds[i] = withSQL(e.Tables, e.SQL)
		if strings.TrimSpace(e.SQL) == "" {
			exNeeds[i].ok = false
		}
	}
	glNeeds := make([]need, len(res.Glossary))
	for i, g := range res.Glossary {
		glNeeds[i] = withSQL(g.Tables, "")
	}
	var prevNeed need
	if res.Previous != nil {
		prevNeed = withSQL(res.Previous.Tables, res.Previous.SQL)
	}

	readable := make([]bool, len(schemas))
	if len(schemas) > 0 {
		var rows textRows
		if _, _, err := up.Stream(ctx, relationsSQL, 0, &rows, []byte(textArray(schemas)), []byte(textArray(names))); err != nil {
			return nil, fmt.Errorf("check the client's privileges on examples and glossary: %w", err)
		}
		for _, r := range rows {
			if len(r) != 2 || r[0] == nil {
				return nil, fmt.Errorf("the relation privilege check returned %d columns", len(r))
			}
			n, err := strconv.Atoi(string(r[0]))
			if err != nil || n < 1 || n > len(readable) {
				return nil, fmt.Errorf("the relation privilege check returned relation %q of %d", r[0], len(readable))
			}
			readable[n-1] = string(r[1]) == "t"
		}
	}
	allowed := func(n need) bool {
		if !n.ok {
			return false
		}
		for _, i := range n.rels {
			if !readable[i] {
				return false
			}
		}
		return true
	}

	out := *res
	out.Examples = nil
	for i, e := range res.Examples {
		if allowed(exNeeds[i]) {
			out.Examples = append(out.Examples, e)
		}
	}
	out.Glossary = nil
	for i, g := range res.Glossary {
		if allowed(glNeeds[i]) {
			out.Glossary = append(out.Glossary, g)
		}
	}
	if res.Previous != nil && !allowed(prevNeed) {
		out.Previous = nil
	}
	return &out, nil
}

// splitRelation splits a relation name written as SQL writes it (schema.name
// or name; each part quoted with "" or unquoted, then folded to lower case
// as PostgreSQL folds it) into schema ("" when unqualified) and name.
func splitRelation(s string) (schema, name string, ok bool) {
	var parts []string
	s = strings.TrimSpace(s)
	for {
		var part string
		if strings.HasPrefix(s, `"`) {
			var b strings.Builder
			i := 1
			for {
				j := strings.IndexByte(s[i:], '"')
				if j < 0 {
					return "", "", false
				}
				b.WriteString(s[i : i+j])
				i += j + 1
				if i < len(s) && s[i] == '"' {
					b.WriteByte('"')
					i++
					continue
				}
				break
			}
			part, s = b.String(), s[i:]
		} else {
			j := strings.IndexByte(s, '.')
			if j < 0 {
				j = len(s)
			}
			part, s = strings.ToLower(strings.TrimSpace(s[:j])), s[j:]
			if strings.ContainsAny(part, `" `) {
				return "", "", false
			}
		}
		if part == "" {
			return "", "", false
		}
		parts = append(parts, part)
		if s == "" {
			break
		}
		if s[0] != '.' {
			return "", "", false
		}
		s = s[1:]
	}
	switch len(parts) {
	case 1:
		return "", parts[0], true
	case 2:
		return parts[0], parts[1], true
	default:
		return "", "", false
	}
}
