package retriever

import (
	"strings"
	"testing"

	"github.com/atriumdb/atrium/retriever/vocab"
)

// FuzzQuestionAnalysis feeds any question text a client sends through the
// analysis every retrieval runs before it touches the catalog: shorthand
// numbers (readMagnitudes), addresses and codes (each must be safe inside
// tsquery quotes), the word split, relative time, the
// vocabulary's expansions (lemmas, segmentation, abbreviation guesses),
// the attribute and owner pairs of expansion, and coverage with nothing
// selected. None may panic.
func FuzzQuestionAnalysis(f *testing.F) {
	for _, s := range []string{
		"Which customers opened the most support tickets about late deliveries?",
		"Good morning! Are you there?", "<script>alert('xss')</script>", "'; DROP TABLE users; --",
		"¿Cuántos clientes tenemos? 😀", "\xff\xfe custCntry qty_2024 HTTPServer", "the names of all the customers's orders",
		"list customers with their orders and their", "last 3 months per week", "", "???", "a's b's of of the",
		"earn more than 100k in the last 24h", "'X 100K' \"30d 'a' 24h", "1e999k 99999999999999999999999999999999999k .5k 3.5.2k",
		"mail 100k@example.com, (https://a.b.org/p?q=1). \"x@y.co\" e.g. 3.5 o'b@x.com",
		"SKU S1-000078, COL0000095028 #1042 tkt_1042#2 a--1 2024-05-03 08/30/2015",
	} {
		f.Add(s)
	}
	lx := vocab.Default()
	f.Fuzz(func(t *testing.T, s string) {
		if got := outsideQuotes(s, func(x string) string { return x }); got != s {
			t.Fatalf("outsideQuotes lost text: %q -> %q", s, got)
		}
		if got := outsideAddresses(s, func(x string) string { return x }); got != s {
			t.Fatalf("outsideAddresses lost text: %q -> %q", s, got)
		}
		s = readMagnitudes(s)
		for _, lit := range valueLiterals(s) {
			if lit == "" || len(lit) > maxLiteral || strings.ContainsAny(lit, `'\ `) || !strings.Contains(strings.ToLower(s), lit) {
				t.Fatalf("address %q of %q", lit, s)
			}
		}
		q := newQuery(s, nil, nil)
		q.setExpansions(lx, 0.5)
		_ = attributePairs(q)
		_ = ownerPairs(q)
		if c := selectionCoverage(q, nil, 0.6); c < 0 || c > 1 {
			t.Fatalf("coverage %v for %q", c, s)
		}
	})
}
