package sqlgen

import (
	"errors"
	"strings"
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/atriumdb/atrium/proxy"
)

// FuzzCheck treats every LLM reply as hostile: whatever it holds, ExtractSQL
// and Check must not panic, a rejection must be a *proxy.Error with 42601 or
// 0A000, and what Check accepts must, parsed again on its own, be exactly one
// SELECT whose tree (read through the parser's JSON, independently of the
// checker's walk) holds no data-modifying statement, locking clause or
// SELECT INTO. That last part is what runs, so it is what must be safe.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{
		"SELECT 1", "```sql\nSELECT * FROM shop.orders\n```", "SELECT 1; DELETE FROM t",
		"WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d", "SELECT * FROM t FOR UPDATE",
		"SELECT * INTO x FROM t", "/* c */ SELECT 1 -- ;\n", "SELECT pg_advisory_lock(1)",
		"SELECT 'x\"InsertStmt\":'", "VALUES (1), (2)", "(SELECT 1) UNION (SELECT 2)", "", ";;", "SELECT $$a$$",
		"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r) SELECT * FROM r",
	} {
		f.Add(s)
	}
	denied := []string{`"InsertStmt":`, `"UpdateStmt":`, `"DeleteStmt":`, `"MergeStmt":`, `"lockingClause":`, `"intoClause":`}
	f.Fuzz(func(t *testing.T, reply string) {
		sql := ExtractSQL(reply)
		c, err := Check(sql)
		if err != nil {
			var pe *proxy.Error
			if !errors.As(err, &pe) || (pe.Code != CodeSyntax && pe.Code != CodeNotReadOnly) {
				t.Fatalf("Check(%q): %v, want a 42601 or 0A000 *proxy.Error", sql, err)
			}
			return
		}
		res, err := pg_query.Parse(c.SQL)
		if err != nil {
			t.Fatalf("Check(%q) accepted %q, which does not parse on its own: %v", sql, c.SQL, err)
		}
		if len(res.Stmts) != 1 || res.Stmts[0].GetStmt().GetSelectStmt() == nil {
			t.Fatalf("Check(%q) accepted %q, which is not one SELECT", sql, c.SQL)
		}
		js, err := pg_query.ParseToJSON(c.SQL)
		if err != nil {
			t.Fatalf("ParseToJSON(%q): %v", c.SQL, err)
		}
		for _, d := range denied {
			if strings.Contains(js, d) {
				t.Fatalf("Check(%q) accepted %q, whose tree holds %s", sql, c.SQL, d)
			}
		}
		if _, err := ReadSources(c.SQL); err != nil {
			t.Fatalf("ReadSources(%q) of accepted SQL: %v", c.SQL, err)
		}
	})
}
