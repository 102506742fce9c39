package retriever

import (
	"fmt"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// sqlRelations lists the relations an example's SQL reads, from
// PostgreSQL's own parse tree, for examples stored without their tables.
// CTE names in scope are not relations. It is the minimal walk of
// sqlgen.ReadSources (the retriever does not depend on sqlgen): a name is
// taken as written, unqualified names resolve against the catalog later.
func sqlRelations(sql string) ([]tableRef, error) {
	res, err := pg_query.Parse(sql)
	if err != nil {
		return nil, fmt.Errorf("parse example SQL: %w", err)
	}
	w := &relWalker{seen: map[tableRef]bool{}}
	for _, st := range res.GetStmts() {
		w.walk(st.ProtoReflect(), nil)
	}
	return w.out, nil
}

type relScope struct {
	names map[string]bool
	outer *relScope
}

func (s *relScope) has(name string) bool {
	for ; s != nil; s = s.outer {
		if s.names[name] {
			return true
		}
	}
	return false
}

type relWalker struct {
	seen map[tableRef]bool
	out  []tableRef
}

func (w *relWalker) walk(m protoreflect.Message, sc *relScope) {
	if !m.IsValid() {
		return
	}
	switch n := m.Interface().(type) {
	case *pg_query.SelectStmt:
		if wc := n.GetWithClause(); wc != nil && len(wc.GetCtes()) > 0 {
			inner := &relScope{names: map[string]bool{}, outer: sc}
			if wc.GetRecursive() {
				for _, c := range wc.GetCtes() {
					inner.names[c.GetCommonTableExpr().GetCtename()] = true
				}
			}
			// A non-recursive CTE sees only the CTEs before it.
			for _, c := range wc.GetCtes() {
				cte := c.GetCommonTableExpr()
				w.walk(cte.GetCtequery().ProtoReflect(), inner)
				inner.names[cte.GetCtename()] = true
			}
			w.fields(m, inner, "with_clause")
			return
		}
	case *pg_query.RangeVar:
		if n.GetSchemaname() == "" && sc.has(n.GetRelname()) {
			return
		}
		t := tableRef{schema: n.GetSchemaname(), name: n.GetRelname()}
		if !w.seen[t] {
			w.seen[t] = true
			w.out = append(w.out, t)
		}
		return
	}
	w.fields(m, sc, "")
}

func (w *relWalker) fields(m protoreflect.Message, sc *relScope, skip protoreflect.Name) {
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
