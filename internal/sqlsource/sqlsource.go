// Package sqlsource reads which relations and functions a query names, from
// PostgreSQL's own parse tree (pg_query). It is shared by the SQL checks
// (sqlgen: the cache's privilege re-check and the function allow-list) and
// retrieval (retriever: the tables of a curated example), which must agree
// on what a query reads.
package sqlsource

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Relation is a relation as the query writes it: Schema is "" when the
// name is unqualified (it resolves through search_path).
type Relation struct {
	Schema, Name string
}

// Sources are what a query reads.
type Sources struct {
	// Relations are the relations the query names, each once, in order of
	// first appearance. A name that refers to a CTE in scope is not a
	// relation; the same name outside that CTE's scope is.
	Relations []Relation
	// Functions are the names (lower case, without schema) of the
	// functions the query calls, each once, in order of first appearance.
	Functions []string
}

// Read parses sql and lists its relations and functions. CTE names are
// scoped as PostgreSQL scopes them: a WITH clause's names are visible in
// its own SELECT (its set-operation arms and subqueries included) and, for
// a non-recursive WITH, each CTE sees only the CTEs before it, so
//
//	WITH docs AS (SELECT * FROM docs) SELECT * FROM docs
//
// reads the real table docs, and a CTE inside a subquery hides nothing
// outside it.
func Read(sql string) (*Sources, error) {
	res, err := pg_query.Parse(sql)
	if err != nil {
		return nil, err
	}
	w := &walker{rels: map[Relation]bool{}, funcs: map[string]bool{}}
	for _, st := range res.GetStmts() {
		w.walk(st.ProtoReflect(), nil)
	}
	return &w.out, nil
}

// cteScope is one WITH clause's names, linked to the enclosing scope.
type cteScope struct {
	names map[string]bool
	outer *cteScope
}

func (s *cteScope) has(name string) bool {
	for ; s != nil; s = s.outer {
		if s.names[name] {
			return true
		}
	}
	return false
}

type walker struct {
	rels  map[Relation]bool
	funcs map[string]bool
	out   Sources
}

func (w *walker) walk(m protoreflect.Message, sc *cteScope) {
	if !m.IsValid() {
		return
	}
	switch n := m.Interface().(type) {
	case *pg_query.SelectStmt:
		if wc := n.GetWithClause(); wc != nil && len(wc.GetCtes()) > 0 {
			inner := &cteScope{names: map[string]bool{}, outer: sc}
			ctes := wc.GetCtes()
			if wc.GetRecursive() {
				for _, c := range ctes {
					inner.names[c.GetCommonTableExpr().GetCtename()] = true
				}
			}
			for _, c := range ctes {
				// A non-recursive CTE's query sees only the CTEs before it.
				w.walk(c.GetCommonTableExpr().GetCtequery().ProtoReflect(), inner)
				inner.names[c.GetCommonTableExpr().GetCtename()] = true
			}
			w.fields(m, inner, "with_clause")
			return
		}
	case *pg_query.RangeVar:
		if n.GetSchemaname() == "" && sc.has(n.GetRelname()) {
			return
		}
		r := Relation{Schema: n.GetSchemaname(), Name: n.GetRelname()}
		if !w.rels[r] {
			w.rels[r] = true
			w.out.Relations = append(w.out.Relations, r)
		}
		return
	case *pg_query.FuncCall:
		if parts := n.GetFuncname(); len(parts) > 0 {
			f := strings.ToLower(parts[len(parts)-1].GetString_().GetSval())
			if !w.funcs[f] {
				w.funcs[f] = true
				w.out.Functions = append(w.out.Functions, f)
			}
		}
	}
	w.fields(m, sc, "")
}

// fields walks every message field of m except skip.
func (w *walker) fields(m protoreflect.Message, sc *cteScope, skip protoreflect.Name) {
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Name() == skip {
			return true
		}
		switch {
		case fd.IsList() && fd.Message() != nil:
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				w.walk(l.Get(i).Message(), sc)
			}
		case fd.Message() != nil && !fd.IsMap():
			w.walk(v.Message(), sc)
		}
		return true
	})
}
