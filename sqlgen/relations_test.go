package sqlgen

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReadSources(t *testing.T) {
	for _, tc := range []struct {
		sql   string
		rels  []string
		funcs []string
	}{
		{"SELECT 1", nil, nil},
		{"SELECT * FROM a.t JOIN u ON true", []string{`"a"."t"`, `"u"`}, nil},
		// The case: a CTE named like a table, the table read inside it.
		{"WITH tenant_docs AS (SELECT * FROM tenant_docs WHERE id > 0) SELECT d.id FROM public.accounts a, tenant_docs d",
			[]string{`"public"."accounts"`, `"tenant_docs"`}, nil},
		// A CTE in a subquery hides nothing outside it.
		{"SELECT * FROM (WITH docs AS (SELECT 1) SELECT * FROM docs) x, docs", []string{`"docs"`}, nil},
		{"WITH docs AS (SELECT 1) SELECT * FROM docs", nil, nil},
		{"WITH docs AS (SELECT 1) SELECT * FROM public.docs", []string{`"public"."docs"`}, nil},
		// Non-recursive: a CTE sees only the CTEs before it.
		{"WITH a AS (SELECT * FROM b), b AS (SELECT 1) SELECT * FROM a, b", []string{`"b"`}, nil},
		{"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT * FROM r", nil, nil},
		{"SELECT count(*), pg_catalog.now() FROM t UNION SELECT 1, x.f() FROM generate_series(1, 2) g",
			[]string{`"t"`}, []string{"count", "f", "generate_series", "now"}},
		{"SELECT * FROM t WHERE id IN (WITH t AS (SELECT 1) SELECT * FROM t)", []string{`"t"`}, nil},
	} {
		got, err := ReadSources(tc.sql)
		require.NoError(t, err, tc.sql)
		require.Equal(t, tc.rels, got.Relations, tc.sql)
		require.Equal(t, tc.funcs, got.Functions, tc.sql)
	}
}
