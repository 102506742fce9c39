package retriever

import (
	"fmt"

	"github.com/atriumdb/atrium/internal/sqlsource"
)

// sqlRelations lists the relations an example's SQL reads, from
// PostgreSQL's own parse tree, for examples stored without their tables.
// CTE names in scope are not relations; the walk is sqlsource's, the one
// the SQL checks use. A name is taken as written; unqualified names
// resolve against the catalog later.
func sqlRelations(sql string) ([]tableRef, error) {
	src, err := sqlsource.Read(sql)
	if err != nil {
		return nil, fmt.Errorf("parse example SQL: %w", err)
	}
	out := make([]tableRef, len(src.Relations))
	for i, r := range src.Relations {
		out[i] = tableRef{schema: r.Schema, name: r.Name}
	}
	return out, nil
}
