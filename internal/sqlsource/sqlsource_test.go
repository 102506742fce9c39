package sqlsource

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRead: relations and functions each once, in order of first
// appearance, with CTE names scoped as PostgreSQL scopes them.
func TestRead(t *testing.T) {
	src, err := Read(`WITH docs AS (SELECT * FROM docs WHERE lower(title) = 'x')
SELECT count(*), lower(d.title) FROM docs d JOIN shop."Orders" o ON o.id = d.id
WHERE d.id IN (SELECT id FROM (WITH x AS (SELECT 1 AS id) SELECT id FROM x) s) AND EXISTS (SELECT 1 FROM x)`)
	require.NoError(t, err)
	require.Equal(t, []Relation{{Name: "docs"}, {Schema: "shop", Name: "Orders"}, {Name: "x"}}, src.Relations,
		"the CTE's own query reads the table docs; x outside its subquery is a relation")
	require.Equal(t, []string{"lower", "count"}, src.Functions)

	src, err = Read(`WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 3) SELECT * FROM t`)
	require.NoError(t, err)
	require.Empty(t, src.Relations, "a recursive CTE names itself")

	_, err = Read("SELEC 1")
	require.Error(t, err)
}
