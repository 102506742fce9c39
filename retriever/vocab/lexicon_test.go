package vocab

import (
	"bytes"
	"compress/gzip"
	"io"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEmbeddedLoads checks that the embedded data parses; Default panics
// otherwise.
func TestEmbeddedLoads(t *testing.T) {
	l, err := Load()
	require.NoError(t, err)
	require.Greater(t, l.nlemmas, 50000, "WordNet has about 77k single-word lemmas")
	require.Greater(t, len(l.entries), 300000)
	require.NotEmpty(t, l.abbrev)
	require.Same(t, Default(), Default(), "Default loads once")
}

func terms(es []Expansion) map[string]Expansion {
	m := make(map[string]Expansion, len(es))
	for _, e := range es {
		m[e.Term] = e
	}
	return m
}

// TestExpandKnownPairs pins pairs WordNet and the learned data must bridge.
func TestExpandKnownPairs(t *testing.T) {
	l := Default()
	cases := []struct {
		word, term, kind string
	}{
		{"vocalist", "singer", KindSynonym},   // same synset
		{"vocalists", "singer", KindSynonym},  // through Lemma
		{"singer", "vocalist", KindSynonym},   // and back
		{"curriculum", "course", KindLearned}, // WordNet only has course_of_study; Spider-Syn has it 159 times
		{"client", "customer", KindLearned},   // Spider-Syn's most frequent substitution
		{"enrollment", "enroll", KindDerivation},
		{"old", "age", KindAttribute},
		{"singer", "musician", KindHypernym},
	}
	for _, c := range cases {
		t.Run(c.word+"→"+c.term, func(t *testing.T) {
			got := terms(l.Expand(c.word))
			e, ok := got[c.term]
			require.True(t, ok, "Expand(%q) = %v", c.word, l.Expand(c.word))
			require.Equal(t, c.kind, e.Kind)
		})
	}
}

// TestExpandInflectedPair: Spider-Syn says "goods" for products, never
// "good"; the adjective does not stand for a product, the plural does, and
// a pair of a word that is no adjective applies to every form.
func TestExpandInflectedPair(t *testing.T) {
	l := Default()
	require.Contains(t, terms(l.Expand("goods")), "product")
	require.NotContains(t, terms(l.Expand("good")), "product", "a good recipe is no product")
	require.Contains(t, terms(l.Expand("good")), "quality", "the base form keeps its other relations")
	require.Contains(t, terms(l.Expand("athlete")), "gymnast", "seen only as athletes, but athlete is no adjective")

	// A term reached both by an inflected-only pair and by another
	// relation stays reachable from the base form through the other.
	l2, err := Parse(Sources{
		Morph:   gz(t, "L quick 4 1\nL fast 4 1\n"),
		WordNet: gz(t, "quick\ts:fast:0\n"),
		Learned: strings.NewReader("quick\tfast\t9\t9\tinflected\n"),
	})
	require.NoError(t, err)
	require.Contains(t, terms(l2.Expand("quick")), "fast")
	require.Len(t, l2.Expand("quick"), 1, "listed once")
	es := l2.Expand("quicker")
	require.Len(t, es, 1, "the inflected form: the pair, once: %v", es)
	require.Equal(t, KindLearned, es[0].Kind)
}

// TestExpandContract checks the promises of Expand on many words: bounded,
// sorted by weight, weights in (0,1), never the word or its base form.
func gz(t *testing.T, s string) io.Reader {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	_, err := w.Write([]byte(s))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return &b
}

func TestExpandContract(t *testing.T) {
	l := Default()
	for _, w := range []string{"course", "person", "singers", "city", "name", "run", "large", "customer", "good", "address"} {
		es := l.Expand(w)
		require.NotEmpty(t, es, w)
		require.LessOrEqual(t, len(es), MaxExpansions, w)
		require.True(t, sort.SliceIsSorted(es, func(i, j int) bool { return es[i].Weight > es[j].Weight }), w)
		for _, e := range es {
			require.Greater(t, e.Weight, 0.0)
			require.Less(t, e.Weight, 1.0)
			require.NotEqual(t, w, e.Term)
			require.NotEqual(t, l.Lemma(w), e.Term)
			require.Equal(t, strings.ToLower(e.Term), e.Term)
		}
	}
	require.Nil(t, l.Expand("xyzzyq"))
	// The returned slice is the caller's: changing it changes nothing inside.
	es := l.Expand("singer")
	es[0].Term = "changed"
	require.NotEqual(t, "changed", l.Expand("singer")[0].Term)
}

func TestLemma(t *testing.T) {
	l := Default()
	cases := map[string]string{
		"singers": "singer", "Vocalists": "vocalist", "cities": "city", "men": "man",
		"ran": "run", "does": "does", "has": "has", "enrolled": "enrol", // verb.exc lists enrol, a synonym of enroll
		"registered": "register", "largest": "large",
		"days": "day", "names": "name", "data": "data", "species": "species",
		"addresses": "address", "status": "status", "tryouts": "tryout", "was": "was", "knives": "knife",
		"courses": "course", "students": "student",
	}
	for in, want := range cases {
		require.Equal(t, want, l.Lemma(in), in)
	}
}

func TestExpandIdentifier(t *testing.T) {
	l := Default()
	for tok, want := range map[string]string{
		"cust": "customer", "amt": "amount", "qty": "quantity", "dt": "date", "num": "number",
		"no": "number", "nbr": "number", "addr": "address", "desc": "description",
		"dept": "department", "emp": "employee", "mgr": "manager", "cnt": "count", "yr": "year",
		"cntry": "country",
	} {
		es := l.ExpandIdentifier(tok)
		require.NotEmpty(t, es, tok)
		require.Equal(t, want, es[0].Term, tok)
		require.Equal(t, KindAbbreviation, es[0].Kind)
	}
	require.Nil(t, l.ExpandIdentifier("customer"))
}

func TestStop(t *testing.T) {
	for _, w := range []string{"the", "what", "show", "many"} {
		require.True(t, Stop(w), w)
	}
	for _, w := range []string{"name", "singer", "number", "age"} {
		require.False(t, Stop(w), w)
	}
}

// TestParseWithoutSources checks a Lexicon with no data: Lemma lower-cases,
// Expand finds nothing.
func TestParseWithoutSources(t *testing.T) {
	l, err := Parse(Sources{})
	require.NoError(t, err)
	require.Equal(t, "singers", l.Lemma("Singers"))
	require.Nil(t, l.Expand("singer"))
}

func TestParseRejectsBadData(t *testing.T) {
	_, err := Parse(Sources{Learned: strings.NewReader("a\tb\tx\t1\n")})
	require.Error(t, err)
	_, err = Parse(Sources{Learned: strings.NewReader("a\tb\t1\t1\tplural\n")})
	require.Error(t, err, "an unknown flag")
	_, err = Parse(Sources{Abbrev: strings.NewReader("a\tb\n")})
	require.Error(t, err)
	_, err = Parse(Sources{Morph: strings.NewReader("not gzip")})
	require.Error(t, err)
}

func BenchmarkExpand(b *testing.B) {
	l := Default()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		l.Expand("vocalists")
	}
}

func BenchmarkLoad(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := Load(); err != nil {
			b.Fatal(err)
		}
	}
}
