package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/catalog/benchload"
	"github.com/atriumdb/atrium/retriever/atrtrain"
)

// TestRenamedBench: every question keeps its wording and its gold tables,
// named as the renamed copy names them; the plain copy keeps the original
// names; the same seed writes the same files.
func TestRenamedBench(t *testing.T) {
	src := t.TempDir()
	tables := []map[string]any{{
		"db_id":                "concert_singer",
		"table_names_original": []string{"singer", "concert", "singer_in_concert"},
		"table_names":          []string{"singer", "concert", "singer in concert"},
		"column_names_original": [][2]any{{-1, "*"},
			{0, "Singer_ID"}, {0, "Name"}, {0, "Country"}, {0, "Age"},
			{1, "concert_ID"}, {1, "concert_Name"}, {1, "Year"},
			{2, "concert_ID"}, {2, "Singer_ID"}},
		"column_types": []string{"text", "number", "text", "text", "number", "number", "text", "text", "number", "number"},
		"primary_keys": []int{1, 5},
		"foreign_keys": [][2]int{{9, 1}, {8, 5}},
	}}
	questions := []map[string]any{
		{"db_id": "concert_singer", "question": "How many singers do we have?", "query": "SELECT count(*) FROM singer"},
		{"db_id": "concert_singer", "question": "Which singers sang in 2014?", "query": "SELECT T1.name FROM singer AS T1 JOIN singer_in_concert AS T2 ON T1.singer_id = T2.singer_id JOIN concert AS T3 ON T2.concert_id = T3.concert_id WHERE T3.year = 2014"},
	}
	for name, v := range map[string]any{"tables.json": tables, "dev.json": questions} {
		data, err := json.Marshal(v)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(src, name), data, 0o644))
	}
	out, plain := filepath.Join(t.TempDir(), "ren"), filepath.Join(t.TempDir(), "plain")
	require.NoError(t, run(src, "dev.json", out, plain, atrtrain.DefaultRenameOptions(7), documenter{on: true, seed: 7}))

	orig, err := benchload.LoadBench(src, "dev.json")
	require.NoError(t, err)
	ren, err := benchload.LoadBench(out, "dev.json")
	require.NoError(t, err)
	pl, err := benchload.LoadBench(plain, "dev.json")
	require.NoError(t, err)
	require.Len(t, ren.Questions, len(orig.Questions))
	db := ren.DBs["concert_singer_aug"]
	require.NotNil(t, db)
	renamed := map[string]bool{}
	for _, n := range db.TableNames {
		renamed[db.Schema()+"."+n] = true
	}
	for i := range orig.Questions {
		want, err := orig.GoldTables(&orig.Questions[i])
		require.NoError(t, err)
		got, err := ren.GoldTables(&ren.Questions[i])
		require.NoError(t, err)
		require.Len(t, got, len(want))
		for _, g := range got {
			require.True(t, renamed[g], "gold %s is not a table of the renamed copy %v", g, db.TableNames)
		}
		require.Equal(t, orig.Questions[i].Question, ren.Questions[i].Question)
		same, err := pl.GoldTables(&pl.Questions[i])
		require.NoError(t, err)
		require.Equal(t, want, same)
	}
	// The singer table has Spider-Syn substitutes, but a word is renamed
	// only by chance: at least the shape must hold, and one seed must
	// give one result.
	again := filepath.Join(t.TempDir(), "again")
	require.NoError(t, run(src, "dev.json", again, "", atrtrain.DefaultRenameOptions(7), documenter{on: true, seed: 7}))
	for _, f := range []string{"tables.json", "dev.json", "databases/concert_singer_aug.sql"} {
		a, err := os.ReadFile(filepath.Join(out, f))
		require.NoError(t, err)
		b, err := os.ReadFile(filepath.Join(again, f))
		require.NoError(t, err)
		require.Equal(t, string(a), string(b), f)
	}
	require.True(t, strings.HasSuffix(db.DBID, "_aug"))

	// The documented copy comments each table and column with its
	// original words, under its new name.
	sql, err := os.ReadFile(filepath.Join(out, "databases", "concert_singer_aug.sql"))
	require.NoError(t, err)
	text := string(sql)
	require.Contains(t, text, "CREATE TABLE")
	for i, tn := range db.TableNames {
		require.Contains(t, text, "COMMENT ON TABLE \""+strings.ToLower(tn)+"\" IS '"+[]string{"singer", "concert", "singer in concert"}[i]+"';")
	}
	require.Equal(t, 9, strings.Count(text, "COMMENT ON COLUMN"), text)
	require.Contains(t, text, "IS 'singer id';")
	sql, err = os.ReadFile(filepath.Join(plain, "databases", "concert_singer.sql"))
	require.NoError(t, err)
	require.Contains(t, string(sql), `COMMENT ON COLUMN "singer_in_concert"."concert_id" IS 'concert id';`)

	// With prose, every comment is a sentence, the same on every run, and
	// a column's names its table too where the template says so.
	prose := filepath.Join(t.TempDir(), "prose")
	require.NoError(t, run(src, "dev.json", prose, "", atrtrain.DefaultRenameOptions(7), documenter{on: true, prose: true, seed: 7}))
	sql, err = os.ReadFile(filepath.Join(prose, "databases", "concert_singer_aug.sql"))
	require.NoError(t, err)
	text = string(sql)
	require.Equal(t, 9, strings.Count(text, "COMMENT ON COLUMN"), text)
	require.Equal(t, 3, strings.Count(text, "COMMENT ON TABLE"), text)
	require.Regexp(t, `COMMENT ON COLUMN "[^"]+"\."[^"]+" IS '[^']*(singer id|unique id of the singer')`, text)
	require.NotContains(t, text, "IS 'singer id';", "a prose comment is not the bare name")
}
