package main

import (
	"testing"

	"github.com/atriumdb/atrium/retriever/vocab/mine"
)

func TestDropSchemaWords(t *testing.T) {
	dbs := []spiderDB{
		{DBID: "concert_singer", TableNamesOrig: []string{"singer_in_concert"}, TableNames: []string{"singer in concert"},
			ColumnNamesOrg: [][]interface{}{{-1, "*"}, {0, "Stadium_ID"}}, ColumnNames: [][]interface{}{{-1, "*"}, {0, "stadium id"}}},
		{DBID: "pets_1", TableNamesOrig: []string{"Pets"}, TableNames: []string{"pets"}},
	}
	lemma := func(w string) string {
		if w == "pets" {
			return "pet"
		}
		return w
	}
	words := heldOutWords(lemma, dbs, map[string]bool{"concert_singer": true})
	for _, w := range []string{"singer", "concert", "stadium", "id"} {
		if !words[w] {
			t.Errorf("held-out word %q missing", w)
		}
	}
	if words["pet"] {
		t.Error("a word of a database that is not held out counts")
	}
	pairs := []mine.Pair{{Syn: "vocalist", Orig: "singer", N: 3, Total: 3}, {Syn: "animal", Orig: "pet", N: 2, Total: 2}}
	got := mine.DropSchemaWords(pairs, words)
	if len(got) != 1 || got[0].Orig != "pet" {
		t.Errorf("dropSchemaWords = %v, want only animal → pet", got)
	}
}
