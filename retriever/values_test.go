package retriever

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// valueTables is the sample database's shape where "marketing" is both a
// column word (shop.customers.marketing_opt_in) and a value (the Marketing
// department, "Marketing and advertising" accounts).
func valueTables() (map[int64]*TableInfo, []rawCandidate) {
	tables := map[int64]*TableInfo{
		1: testTable("shop", "customers", "customer_id", "email", "marketing_opt_in"),
		2: testTable("hr", "departments", "department_id", "name"),
		3: testTable("finance", "accounts", "account_id", "name"),
		4: testTable("support", "tickets", "ticket_id", "status", "opened_at"),
		5: testTable("shop", "reviews", "review_id", "title"),
	}
	for id, t := range tables {
		t.ID = id
		t.prepare(nil, nil)
	}
	raws := []rawCandidate{
		{id: 1, lex: 1},
		{id: 2, lex: 0.5, values: []ValueHit{{Column: "name", Value: "Marketing"}}},
		{id: 3, lex: 0.2, values: []ValueHit{{Column: "name", Value: "Marketing and advertising"}}},
		{id: 4, lex: 0.4, values: []ValueHit{{Column: "status", Value: "open"}}},
		{id: 5, lex: 0.1, values: []ValueHit{{Column: "title", Value: "Average"}}},
	}
	return tables, raws
}

func keptValues(t *testing.T, question string) map[string][]string {
	t.Helper()
	tables, raws := valueTables()
	out := map[string][]string{}
	for _, c := range combine(newQuery(question, nil, nil), raws, tables, hybridParams{keep: 50}) {
		for _, v := range c.Values {
			out[c.Table.QualifiedName()] = append(out[c.Table.QualifiedName()], v.Value)
		}
	}
	return out
}

func TestValueWordsReadAsColumns(t *testing.T) {
	// Lower case, and shop.customers names the word: the column reading.
	require.Empty(t, keptValues(t, "How many customers signed up for marketing e-mail?"))
	// Capitalised inside the sentence, or quoted: the question means the value.
	for _, q := range []string{"Which employees work in Marketing?", "Which employees work in 'marketing'?", `List accounts of "marketing" costs`} {
		require.Equal(t, map[string][]string{
			"hr.departments":   {"Marketing"},
			"finance.accounts": {"Marketing and advertising"},
		}, keptValues(t, q), q)
	}
	// The value's own table names the word too (tickets.opened_at): no
	// other reading competes, the hit stays.
	require.Equal(t, map[string][]string{"support.tickets": {"open"}}, keptValues(t, "How many open tickets are there?"))
	// An aggregate's name is never a value, capitalised or not.
	require.Empty(t, keptValues(t, "Average rating of each review?"))
	require.Empty(t, keptValues(t, "What is the average rating?"))
}

// TestPassingValueMention: a value the question shares less than half the
// words of is no evidence unless the shared word is marked.
func TestPassingValueMention(t *testing.T) {
	// "advertising" is one word of three in "Marketing and advertising".
	require.Empty(t, keptValues(t, "What did we spend on advertising?"))
	require.Equal(t, map[string][]string{"finance.accounts": {"Marketing and advertising"}},
		keptValues(t, "What did we spend on 'advertising'?"), "quoted")
	require.Equal(t, map[string][]string{"finance.accounts": {"Marketing and advertising"}},
		keptValues(t, "What did we spend on marketing and advertising?"), "all its words")
}

func TestMarkedWords(t *testing.T) {
	require.Equal(t, map[string]bool{"marketing": true}, markedWords("Which employees work in Marketing?"))
	require.Equal(t, map[string]bool{"tv": true, "lounge": true, "kyle": true},
		markedWords("Which dorms have a 'TV Lounge' and who is Kyle"))
	require.Equal(t, map[string]bool{"late": true, "delivery": true}, markedWords(`tickets tagged "late delivery"?`))
	require.Empty(t, markedWords("Which customers opened the most tickets?"))
	require.Empty(t, markedWords(""))
}

// markedWords reads any question text a client sends: it must not panic,
// and whatever it marks is a lower-case word of the text.
func FuzzMarkedWords(f *testing.F) {
	for _, s := range []string{"Which employees work in Marketing?", `'unterminated "quote`, "'", "\"\"", "É Ü 'ß'", "\xff\xfe 'a'", "  ", "A B C"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for w := range markedWords(s) {
			if w == "" || w != strings.ToLower(w) {
				t.Fatalf("markedWords(%q) marked %q", s, w)
			}
		}
	})
}

// TestShareValues: a value three or more candidates hold counts at 2/k;
// one two tables hold (a key and its reference) keeps its match.
func TestShareValues(t *testing.T) {
	hit := func(v string, m float64) []ValueHit { return []ValueHit{{Column: "c", Value: v, Match: m}} }
	cands := []*Candidate{
		{Values: hit("EUR", 1)}, {Values: hit("eur", 1)}, {Values: hit("EUR", 1)}, {Values: hit("EUR", 0.5)},
		{Values: hit("Ada", 1)}, {Values: hit("Ada", 1)},
	}
	for _, c := range cands {
		for _, v := range c.Values {
			c.valFull = max(c.valFull, math.Floor(v.Match))
			c.valPart = max(c.valPart, v.Match)
		}
	}
	shareValues(cands)
	require.InDelta(t, 0.5, cands[0].Values[0].Match, 1e-9)
	require.Zero(t, cands[0].valFull)
	require.InDelta(t, 0.5, cands[0].valPart, 1e-9)
	require.InDelta(t, 0.25, cands[3].valPart, 1e-9)
	require.Equal(t, 1.0, cands[4].valFull)
	require.Equal(t, 1.0, cands[5].Values[0].Match)
}
