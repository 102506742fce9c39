package sqlgen

import (
	"context"
	"fmt"
	"sort"

	"github.com/atriumdb/atrium/internal/sqlsource"
)

// Sources are the relations and functions a query reads, taken from
// PostgreSQL's own parse tree.
type Sources struct {
	// Relations are the relations the query names, as quoted
	// (schema-qualified when written so) names, sorted. A name that refers
	// to a CTE in scope is not a relation; the same name outside that
	// CTE's scope is.
	Relations []string
	// Functions are the names (lower case, without schema) of every
	// function the query calls, sorted.
	Functions []string
}

// ReadSources parses sql and lists its relations and functions, with CTE
// names scoped as PostgreSQL scopes them (see sqlsource.Read), so
//
//	WITH docs AS (SELECT * FROM docs) SELECT * FROM docs
//
// reads the real table docs.
func ReadSources(sql string) (*Sources, error) {
	src, err := sqlsource.Read(sql)
	if err != nil {
		return nil, err
	}
	out := &Sources{Functions: src.Functions}
	seen := map[string]bool{}
	for _, r := range src.Relations {
		name := quoteIdent(r.Name)
		if r.Schema != "" {
			name = quoteIdent(r.Schema) + "." + name
		}
		if !seen[name] {
			seen[name] = true
			out.Relations = append(out.Relations, name)
		}
	}
	sort.Strings(out.Relations)
	sort.Strings(out.Functions)
	return out, nil
}

// cacheableSQL decides, on the client's session, whether rows of a query
// may be cached and which relations a cache hit must re-check privileges
// on. $1 are the relations the query names, $2 the functions it calls.
//
// Views are expanded to the relations they read, recursively, through
// their rewrite rules' dependencies (pg_rewrite, pg_depend); a relation
// reached only through views that are all security_invoker is read with
// the asking role's privileges, so it joins the re-check list (invoker);
// through an ordinary view it is read with the view owner's. One row per
// relation (name, invoker, unsafe) and a last row (NULL, false, unsafe)
// for the functions: of the query and of every expanded view, operators'
// functions included. Unsafe is row-level security enabled or forced, a
// relation kind whose rows come from elsewhere (foreign tables), a name
// that no longer resolves, or any function that is not IMMUTABLE or not
// shipped by PostgreSQL or an installed extension: functions are opaque,
// and may read session settings, the clock, or other tables. The query's
// own functions are known by name only (the parse tree does not resolve
// overloads), so every function of that name must pass: a user-defined
// overload makes the name unsafe. (pgvector's sum(vector) is an extension
// member, which is why extension members count as shipped.)
const cacheableSQL = `WITH RECURSIVE dep(oid, invoker) AS (
  SELECT pg_catalog.to_regclass(r)::oid, true FROM unnest(%s::text[]) AS r
  UNION
  SELECT d.refobjid, dep.invoker AND coalesce((SELECT o.option_value IN ('true', 'on', '1', 'yes')
      FROM pg_catalog.pg_options_to_table(v.reloptions) o WHERE o.option_name = 'security_invoker'), false)
  FROM dep
  JOIN pg_catalog.pg_class v ON v.oid = dep.oid AND v.relkind = 'v'
  JOIN pg_catalog.pg_rewrite w ON w.ev_class = v.oid
  JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass AND d.objid = w.oid
    AND d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass AND d.refobjid <> v.oid
), viewdep AS (
  SELECT d.refclassid, d.refobjid FROM dep
  JOIN pg_catalog.pg_rewrite w ON w.ev_class = dep.oid
  JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass AND d.objid = w.oid
), fn(oid) AS (
  SELECT refobjid FROM viewdep WHERE refclassid = 'pg_catalog.pg_proc'::pg_catalog.regclass
  UNION
  SELECT o.oprcode::oid FROM viewdep JOIN pg_catalog.pg_operator o ON o.oid = viewdep.refobjid
  WHERE viewdep.refclassid = 'pg_catalog.pg_operator'::pg_catalog.regclass
  UNION
  SELECT p.oid FROM pg_catalog.pg_proc p WHERE p.proname = ANY (%s::text[])
)
SELECT pg_catalog.format('%%I.%%I', n.nspname, c.relname), dep.invoker,
  c.oid IS NULL OR c.relrowsecurity OR c.relforcerowsecurity OR c.relkind NOT IN ('r', 'v', 'm', 'p')
FROM dep
LEFT JOIN pg_catalog.pg_class c ON c.oid = dep.oid
LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
UNION ALL
SELECT NULL, false, EXISTS (SELECT 1 FROM fn JOIN pg_catalog.pg_proc p ON p.oid = fn.oid
  WHERE p.provolatile <> 'i' OR (p.oid >= 16384 AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend e
    WHERE e.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND e.objid = p.oid AND e.deptype = 'e')))`

// cacheable reports whether the rows of sql may be cached, and the
// relations a cache hit must re-check the asking role's privileges on:
// those sql names (CTE names scoped, see ReadSources) and those it reads
// through security_invoker views. It runs inside sc, on the client's
// session; any failure means "not cacheable".
func cacheable(ctx context.Context, sc *scope, sql string) (bool, []string) {
	src, err := ReadSources(sql)
	if err != nil {
		return false, nil
	}
	q := fmt.Sprintf(cacheableSQL, textArray(setOf(src.Relations), same), textArray(setOf(src.Functions), same))
	res, err := sc.query(ctx, q)
	if err != nil || len(res.Rows) == 0 {
		return false, nil
	}
	seen := map[string]bool{}
	var check []string
	for _, row := range res.Rows {
		if len(row) != 3 || string(row[2]) != "f" {
			return false, nil
		}
		if row[0] != nil && string(row[1]) == "t" && !seen[string(row[0])] {
			seen[string(row[0])] = true
			check = append(check, string(row[0]))
		}
	}
	sort.Strings(check)
	return true, check
}

func setOf(ss []string) map[string]bool {
	m := make(map[string]bool, len(ss))
	for _, s := range ss {
		m[s] = true
	}
	return m
}

func same(s string) string { return s }
