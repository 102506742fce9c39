package benchload

import (
	"os"
	"path/filepath"
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

// An unanswerable set lives outside the benchmark directory, names the
// databases it is asked without, and has empty gold SQL.
func TestUnanswerableQuestions(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tables.json"), []byte(`[{"db_id":"b_db","table_names_original":["t"]},{"db_id":"a_db","table_names_original":["u"]}]`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "dev.json"), []byte(`[{"db_id":"a_db","question":"q","query":"SELECT * FROM u"}]`), 0o644))
	other := filepath.Join(t.TempDir(), "unanswerable.json")
	require.NoError(t, os.WriteFile(other, []byte(`[
		{"db_id":"","question":"weather?","query":"","kind":"offtopic"},
		{"db_id":"a_db","question":"q2","query":"","exclude_dbs":["a_db"],"kind":"foreign_db"},
		{"db_id":"c_db","question":"q3","query":"","pool_dbs":["b_db","d_db"]}]`), 0o644))
	b, err := LoadBench(dir, other)
	require.NoError(t, err)
	require.Len(t, b.Questions, 3)
	for _, q := range b.Questions {
		require.True(t, q.Unanswerable(), q.Question)
	}
	require.Equal(t, []string{"a_db"}, b.Questions[1].ExcludeDBs)
	require.Equal(t, "offtopic", b.Questions[0].Kind)
	require.Equal(t, []string{"a_db", "b_db", "c_db", "d_db"}, b.PoolDBIDs())

	b, err = LoadBench(dir, "")
	require.NoError(t, err)
	require.False(t, b.Questions[0].Unanswerable())
	require.Equal(t, []string{"a_db"}, b.PoolDBIDs())
}

// TestAnsweredElsewhere: a question is answered elsewhere only when one
// other database of the pool has tables named like all its gold tables.
func TestAnsweredElsewhere(t *testing.T) {
	b := &Bench{DBs: map[string]*Database{
		"concert_singer": {DBID: "concert_singer", TableNames: []string{"singer", "concert", "singer_in_concert"}},
		"singer":         {DBID: "singer", TableNames: []string{"Singers", "song"}},
		"orchestra":      {DBID: "orchestra", TableNames: []string{"conductor", "concert"}},
	}}
	all := []string{"concert_singer", "singer", "orchestra"}
	require.True(t, b.AnsweredElsewhere("concert_singer", []string{"concert_singer.singer"}, all))
	require.False(t, b.AnsweredElsewhere("concert_singer", []string{"concert_singer.singer"}, []string{"concert_singer", "orchestra"}))
	// singer and concert exist, but in two different databases.
	require.False(t, b.AnsweredElsewhere("concert_singer", []string{"concert_singer.singer", "concert_singer.concert"}, all))
	require.False(t, b.AnsweredElsewhere("concert_singer", []string{"concert_singer.singer_in_concert"}, all))
	require.False(t, b.AnsweredElsewhere("concert_singer", nil, all))
}
