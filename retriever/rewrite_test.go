package retriever

import (
	"testing"

	"github.com/atriumdb/atrium/retriever/vocab"
)

func rewriteCandidates(tables ...*TableInfo) []*Candidate {
	cands := make([]*Candidate, len(tables))
	for i, t := range tables {
		t.prepare(nil, nil)
		cands[i] = &Candidate{Table: t, Rank: i + 1}
	}
	return cands
}

func TestRewriteToSchema(t *testing.T) {
	lx := vocab.Default()
	cands := rewriteCandidates(
		&TableInfo{Schema: "world", Name: "country", Columns: []ColumnInfo{{Name: "name"}, {Name: "continent"}, {Name: "population"}}},
		&TableInfo{Schema: "kennel", Name: "dogs", Columns: []ColumnInfo{{Name: "dog_id"}, {Name: "name"}, {Name: "weight"}, {Name: "owner_id"}}},
	)
	ask := func(text string, minWeight float64) (*Query, *Query, []Rewrite) {
		q := newQuery(text, nil, nil)
		q.setExpansions(lx, 0.5)
		q2, rws := rewriteToSchema(q, cands, lx, 0.5, minWeight)
		return q, q2, rws
	}

	// A synonym (nation, country) and a hypernym (puppies, dog) no
	// candidate carries literally become the candidates' words.
	q, q2, rws := ask("Which nation has the most puppies?", DefaultSchemaRewrite)
	if len(rws) != 2 || rws[0].From != "nation" || rws[0].To != "country" || rws[1].From != "puppies" || rws[1].To != "dogs" {
		t.Fatalf("rewrites = %+v, want nation→country, puppies→dogs", rws)
	}
	if !q2.content.set[stem("country")] || !q2.content.set[stem("dogs")] || q2.content.set[stem("nation")] {
		t.Errorf("rewritten content stems = %v", q2.content.stems)
	}
	if q2.Text != q.Text {
		t.Errorf("rewritten query's text %q, want the user's %q", q2.Text, q.Text)
	}
	if q.content.set[stem("country")] {
		t.Error("the original query was modified")
	}

	// Words the schema carries, numbers and relative time expressions
	// are left alone; a question in the schema's words is not rewritten.
	for _, text := range []string{
		"What is the name and population of each country?",
		"How many dogs weigh over 20 kilos?",
		"Which dogs were registered in the last 3 months?",
	} {
		q, q2, rws := ask(text, DefaultSchemaRewrite)
		for _, rw := range rws {
			if rw.From == "name" || rw.From == "population" || rw.From == "dogs" || rw.From == "months" || rw.From == "20" || rw.From == "3" {
				t.Errorf("%q: rewrote %q", text, rw.From)
			}
		}
		if text == "What is the name and population of each country?" && q2 != q {
			t.Errorf("%q: rewritten to %v although every word is the schema's", text, q2.content.words)
		}
	}

	// Bridges weaker than the bar are not taken (puppies → dog is a
	// hypernym: 0.35 × 0.5), and 0 or less turns rewriting off.
	if _, _, rws := ask("Which nation has the most puppies?", 0.3); len(rws) != 1 || rws[0].To != "country" {
		t.Errorf("min weight 0.3: rewrites = %+v, want only nation→country", rws)
	}
	if q, q2, rws := ask("Which nation has the most puppies?", 0); q2 != q || rws != nil {
		t.Errorf("min weight 0: rewrites = %+v", rws)
	}
}

// "Off" survives a second pass of defaults: evaluation fills a Config and
// hands it to New, which fills it again; -1 had come back as the default.
func TestConfigDefaultsIdempotent(t *testing.T) {
	c := Config{SchemaRewrite: -1, QuestionExpansion: -1, ExampleWeight: -1, Alpha: -1, FollowUpBonus: -1}.withDefaults()
	d := c.withDefaults()
	if d.SchemaRewrite != 0 || d.QuestionExpansion != 0 || d.ExampleWeight != 0 || d.Alpha != 0 || d.FollowUpBonus != 0 {
		t.Errorf("off came back after a second withDefaults: %+v", d)
	}
	if e := (Config{}).withDefaults(); e.SchemaRewrite != DefaultSchemaRewrite || e.QuestionExpansion != 0.5 {
		t.Errorf("defaults: SchemaRewrite %v, QuestionExpansion %v", e.SchemaRewrite, e.QuestionExpansion)
	}
}
