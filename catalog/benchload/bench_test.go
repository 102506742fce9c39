package benchload

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestGoldTables(t *testing.T) {
	b := &Bench{DBs: map[string]*Database{"db": {DBID: "DB", TableNames: []string{"Singer", "Concert", "x"}}}}
	for _, tc := range []struct {
		sql  string
		want []string
	}{
		{"SELECT count(*) FROM singer", []string{"db.singer"}},
		{"WITH x AS (SELECT * FROM Concert) SELECT * FROM x JOIN singer ON true", []string{"db.concert", "db.singer"}},
		{"SELECT name FROM singer WHERE id NOT IN (SELECT id FROM concert)", []string{"db.concert", "db.singer"}},
		{"SELECT a FROM singer UNION SELECT b FROM concert", []string{"db.concert", "db.singer"}},
	} {
		got, err := b.GoldTables(&Question{DBID: "DB", Query: tc.sql})
		require.NoError(t, err, tc.sql)
		require.Equal(t, tc.want, got, tc.sql)
	}
	// Unparsable for PostgreSQL: Spider's parsed form is used.
	got, err := b.GoldTables(&Question{DBID: "DB", Query: "SELECT `a` FROM singer",
		Parsed: []byte(`{"from":{"table_units":[["table_unit",1]]},"where":[[false,2,[0,[0,1,false],null],{"from":{"table_units":[["table_unit",0]]}},null]]}`)})
	require.NoError(t, err)
	require.Equal(t, []string{"db.concert", "db.singer"}, got)
}
