package sqlgen

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/atriumdb/atrium/proxy"
)

// Generated SQL may only call functions that cannot act outside the
// question's read-only transaction. A read-only transaction stops writes to
// tables, but not what a function does beside them: session advisory locks
// that outlive the ROLLBACK, signals to other backends, server files and
// configuration, statistics resets, another connection (dblink) that
// commits on its own, and SQL text run by a function (query_to_xml,
// ts_stat), which a check of the names written in the statement cannot see
// into. So the rule is an allow-list, decided by the catalog of the database
// the question runs in, on the client's own session:
//
//   - IMMUTABLE and STABLE functions are allowed: by PostgreSQL's contract
//     for these labels they have no side effects and do not modify the
//     database. A user-defined function is trusted with the volatility its
//     owner declared, as PostgreSQL's planner trusts it; a mislabelled
//     function is its owner's doing, not the LLM's.
//   - VOLATILE functions are refused, except the short reviewed list in
//     harmlessVolatile (in pg_catalog only).
//   - Functions that run SQL text or reach the server's files, large
//     objects or other connections are refused whatever their label
//     (alwaysDeniedPrefixes).
//
// What counts as a call: every function name in the statement (also in FROM,
// as aggregates, with their transition and final functions, as window
// functions, and the b of every a.b, which PostgreSQL may read as b(a)),
// every operator (through pg_operator.oprcode, so user-defined
// operators count), and the cast functions of every explicit cast's target
// type. Overloads are resolved conservatively: every candidate of that name
// that the server could choose (in the named schema, or in the session's
// search path including pg_catalog; pg_temp is the session's own temporary
// schema) must be allowed, so no argument-type trick can pick a refused
// candidate. Implicit casts, domain constraints, argument defaults,
// row-level security policies and view bodies are the database owner's
// definitions and are not checked here.

// harmlessVolatile are pg_catalog's VOLATILE functions a question may call:
// they return a value and change nothing outside the statement (pg_sleep
// only waits, bounded by the statement_timeout of the scope).
var harmlessVolatile = map[string]bool{
	"random": true, "random_normal": true, "clock_timestamp": true, "timeofday": true,
	"gen_random_uuid": true, "pg_sleep": true, "pg_sleep_for": true, "pg_sleep_until": true,
}

// alwaysDeniedPrefixes name functions refused whatever their volatility and
// schema: they run SQL text of their own (the *_to_xml family, ts_stat,
// ts_rewrite's query form), touch server files or large objects, or open
// another connection (dblink). Checked in pg_proc on PostgreSQL 15, the
// database_/schema_/table_to_xml family is STABLE, hence the list.
var alwaysDeniedPrefixes = []string{
	"query_to_xml", "cursor_to_xml", "table_to_xml", "schema_to_xml", "database_to_xml",
	"ts_stat", "ts_rewrite", "pg_read_", "pg_ls_", "pg_stat_file", "pg_file_", "lo_", "dblink",
}

// callAllowed says whether a generated statement may call the function
// nsp.name of volatility vol ('i', 's' or 'v'), and if not, why.
func callAllowed(nsp, name string, vol string) (bool, string) {
	for _, p := range alwaysDeniedPrefixes {
		if strings.HasPrefix(name, p) {
			return false, "it runs SQL text or reaches the server's files or other connections"
		}
	}
	switch vol {
	case "i", "s":
		return true, ""
	}
	if nsp == "pg_catalog" && harmlessVolatile[name] {
		return true, ""
	}
	return false, "it is VOLATILE, and only IMMUTABLE and STABLE functions are allowed"
}

// qname is a possibly schema-qualified name as written ("" schema: resolved
// through the search path).
type qname struct{ nsp, name string }

// callRefs are the functions, operators and cast target types a statement
// names.
type callRefs struct {
	funcs, ops map[qname]bool
	// attrs are the last names of a.b references: PostgreSQL reads a.b as
	// b(a) when a's row type has no column b (functional notation), so each
	// may call a one-argument function b.
	attrs map[qname]bool
	casts map[string]bool // type names, quoted and qualified as written
}

// collectCalls parses sql and lists what it calls.
func collectCalls(sql string) (*callRefs, error) {
	res, err := pg_query.Parse(sql)
	if err != nil {
		return nil, err
	}
	r := &callRefs{funcs: map[qname]bool{}, ops: map[qname]bool{}, attrs: map[qname]bool{}, casts: map[string]bool{}}
	for _, st := range res.Stmts {
		r.walk(st.ProtoReflect())
	}
	return r, nil
}

func nameOf(parts []*pg_query.Node) (qname, bool) {
	var ss []string
	for _, p := range parts {
		ss = append(ss, p.GetString_().GetSval())
	}
	switch len(ss) {
	case 0:
		return qname{}, false
	case 1:
		return qname{name: ss[0]}, true
	}
	return qname{nsp: ss[len(ss)-2], name: ss[len(ss)-1]}, true
}

func (r *callRefs) op(parts []*pg_query.Node) {
	if q, ok := nameOf(parts); ok {
		r.ops[q] = true
	}
}

func (r *callRefs) walk(m protoreflect.Message) {
	if !m.IsValid() {
		return
	}
	switch n := m.Interface().(type) {
	case *pg_query.FuncCall:
		if q, ok := nameOf(n.GetFuncname()); ok {
			r.funcs[q] = true
		}
	case *pg_query.A_Expr:
		switch n.GetKind() {
		case pg_query.A_Expr_Kind_AEXPR_BETWEEN, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN,
			pg_query.A_Expr_Kind_AEXPR_BETWEEN_SYM, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM:
			// Named "BETWEEN"; the server rewrites it to >= and <=.
			r.ops[qname{name: ">="}] = true
			r.ops[qname{name: "<="}] = true
		default:
			r.op(n.GetName())
		}
	case *pg_query.ColumnRef:
		if f := n.GetFields(); len(f) >= 2 {
			if name := f[len(f)-1].GetString_().GetSval(); name != "" {
				r.attrs[qname{name: name}] = true
			}
		}
	case *pg_query.A_Indirection:
		for _, ind := range n.GetIndirection() {
			if name := ind.GetString_().GetSval(); name != "" {
				r.attrs[qname{name: name}] = true
			}
		}
	case *pg_query.SubLink:
		r.op(n.GetOperName())
	case *pg_query.SortBy:
		r.op(n.GetUseOp())
	case *pg_query.CaseExpr:
		if n.GetArg() != nil {
			r.ops[qname{name: "="}] = true
		}
	case *pg_query.JoinExpr:
		if n.GetIsNatural() || len(n.GetUsingClause()) > 0 {
			r.ops[qname{name: "="}] = true
		}
	case *pg_query.TypeCast:
		var parts []string
		for _, p := range n.GetTypeName().GetNames() {
			parts = append(parts, quoteIdent(p.GetString_().GetSval()))
		}
		if len(parts) > 2 {
			parts = parts[len(parts)-2:] // a catalog name: the server refuses it anyway
		}
		if len(parts) > 0 {
			r.casts[strings.Join(parts, ".")] = true
		}
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				r.walk(l.Get(i).Message())
			}
		case fd.Message() != nil && !fd.IsMap():
			r.walk(v.Message())
		}
		return true
	})
}

// callsQuery resolves every function, operator and cast a statement names to
// the pg_proc entries the server could choose, with aggregates' support
// functions, in one round trip. Its answer is one row holding a JSON array
// of [written, schema, function, volatility], or NULL.
const callsQuery = `SELECT (
SELECT pg_catalog.json_agg(pg_catalog.json_build_array(called.written, n.nspname, p.proname, p.provolatile))
FROM (
  SELECT fn.name || '()', p.oid
    FROM ROWS FROM (pg_catalog.unnest(%s::text[]), pg_catalog.unnest(%s::text[])) fn(nsp, name)
    JOIN pg_catalog.pg_proc p ON p.proname = fn.name
    JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
   WHERE CASE WHEN fn.nsp = '' THEN n.nspname = ANY (pg_catalog.current_schemas(true))
         WHEN fn.nsp = 'pg_temp' THEN n.oid = pg_catalog.pg_my_temp_schema()
         ELSE n.nspname = fn.nsp END
  UNION ALL
  SELECT fn.name || '()', p.oid
    FROM pg_catalog.unnest(%s::text[]) fn(name)
    JOIN pg_catalog.pg_proc p ON p.proname = fn.name AND p.pronargs = 1
    JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
   WHERE n.nspname = ANY (pg_catalog.current_schemas(true))
  UNION ALL
  SELECT 'operator ' || op.name, o.oprcode::oid
    FROM ROWS FROM (pg_catalog.unnest(%s::text[]), pg_catalog.unnest(%s::text[])) op(nsp, name)
    JOIN pg_catalog.pg_operator o ON o.oprname = op.name
    JOIN pg_catalog.pg_namespace n ON n.oid = o.oprnamespace
   WHERE CASE WHEN op.nsp = '' THEN n.nspname = ANY (pg_catalog.current_schemas(true))
         WHEN op.nsp = 'pg_temp' THEN n.oid = pg_catalog.pg_my_temp_schema()
         ELSE n.nspname = op.nsp END
  UNION ALL
  SELECT 'cast to ' || ty.name, c.castfunc
    FROM pg_catalog.unnest(%s::text[]) ty(name)
    JOIN pg_catalog.pg_cast c ON c.casttarget = pg_catalog.to_regtype(ty.name)
) called(written, f)
CROSS JOIN LATERAL (
  SELECT called.f
  UNION
  SELECT s.f FROM pg_catalog.pg_aggregate a,
    LATERAL pg_catalog.unnest(ARRAY[a.aggtransfn, a.aggfinalfn, a.aggcombinefn, a.aggserialfn,
      a.aggdeserialfn, a.aggmtransfn, a.aggminvtransfn, a.aggmfinalfn]::oid[]) s(f)
   WHERE a.aggfnoid = called.f
) c(f)
JOIN pg_catalog.pg_proc p ON p.oid = c.f
JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace)`

// checkCalls refuses generated SQL that calls a function callAllowed
// refuses, resolved in the catalog of the session's database (one catalog
// query, run inside the scope's read-only transaction under the session's
// search path). Every call is resolved afresh: a CREATE FUNCTION or ALTER
// FUNCTION ... VOLATILE is seen at the next validation. The error is 0A000
// naming the function, which the LLM may get back in a repair round.
func checkCalls(ctx context.Context, sc *scope, sql string) error {
	// SQL from the cache or from another session's generation did not pass
	// through this session's Check; the static rules cost microseconds.
	if _, err := Check(sql); err != nil {
		return err
	}
	// The names below go into the catalog query as literals: the session
	// must read them as written.
	if err := sc.textSafe(ctx, sql); err != nil {
		return err
	}
	refs, err := collectCalls(sql)
	if err != nil {
		return &proxy.Error{Code: CodeSyntax, Message: "generated SQL does not parse: " + err.Error(), Err: err}
	}
	res, err := sc.query(ctx, fmt.Sprintf(callsQuery,
		textArray(refs.funcs, func(q qname) string { return q.nsp }), textArray(refs.funcs, func(q qname) string { return q.name }),
		textArray(refs.attrs, func(q qname) string { return q.name }),
		textArray(refs.ops, func(q qname) string { return q.nsp }), textArray(refs.ops, func(q qname) string { return q.name }),
		textArray(refs.casts, func(s string) string { return s })))
	if err != nil {
		if repairable(err) {
			// The check's own query failed: nothing the LLM could repair.
			return fmt.Errorf("resolve the functions of generated SQL: %v", err)
		}
		return fmt.Errorf("resolve the functions of generated SQL: %w", err)
	}
	if len(res.Rows) != 1 || len(res.Rows[0]) != 1 {
		return errorf(CodeInternal, "unexpected answer to the function check")
	}
	var calls [][4]string
	if js := res.Rows[0][0]; js != nil {
		if err := json.Unmarshal(js, &calls); err != nil {
			return fmt.Errorf("decode the function check: %w", err)
		}
	}
	sort.Slice(calls, func(i, j int) bool { return calls[i][0] < calls[j][0] })
	for _, c := range calls {
		written, nsp, name, vol := c[0], c[1], c[2], c[3]
		if ok, why := callAllowed(nsp, name, vol); !ok {
			if written == name+"()" {
				return notReadOnly("it calls %s, which is not allowed: %s", written, why)
			}
			return notReadOnly("it calls %s, which runs %s.%s(), which is not allowed: %s", written, quoteIdent(nsp), quoteIdent(name), why)
		}
	}
	return nil
}

// textArray writes the keys of set, mapped by f, as a text[] literal in a
// stable order; the literal reads the same whatever
// standard_conforming_strings is.
func textArray[K comparable](set map[K]bool, f func(K) string) string {
	keys := make([]K, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
	if len(keys) == 0 {
		return "'{}'"
	}
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = literal(f(k))
	}
	return "ARRAY[" + strings.Join(parts, ", ") + "]"
}
