package retriever

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// An e-mail address, a URL or a host name is found whole, without the
// quotes, brackets and sentence punctuation around it.
func TestAddressLiterals(t *testing.T) {
	for in, want := range map[string][]string{
		"tickets from jonas.fernandez2@example.com":           {"jonas.fernandez2@example.com"},
		`the customer with email "Luisg@Embraer.com.br".`:     {"luisg@embraer.com.br"},
		"(orders@alpine.example), and orders@alpine.example?": {"orders@alpine.example"},
		"pages on https://www.example.com/docs?page=2 today":  {"https://www.example.com/docs?page=2"},
		"emails containing 'gmail.com'":                       {"gmail.com"},
		"visits to shop.example.org:8080/cart.":               {"shop.example.org:8080/cart"},
		// None of these is an address: no two-letter last label, no
		// domain, a quote or an ampersand the patterns do not admit.
		"e.g. the U.S. rate of 3.5 in v1.2":            nil,
		"user@localhost and @handle and a@b":           nil,
		"o'brien@example.com and x&y@example.com":      nil,
		"https://example.com/?a=1&b=2":                 nil,
		"a name with no dots and an email word, email": nil,
	} {
		require.Equal(t, want, valueLiterals(in), in)
	}
	long := strings.Repeat("a", maxLiteral) + "@example.com"
	require.Nil(t, valueLiterals("mail "+long), "longer than a sampled value")
}

// A code (an order or tracking number, a SKU, a course code) is looked up
// whole too: it has a digit and a letter or a separator; a plain number,
// a decimal and a dotted version are none.
func TestCodeLiterals(t *testing.T) {
	for in, want := range map[string][]string{
		"where is shipment COL0000095028?":          {"col0000095028"},
		"which supplier has SKU S1-000078?":         {"s1-000078"},
		`the course "ACCT-211", and ACCT-211 again`: {"acct-211"},
		"orders placed on 2024-05-03 or 08/30/2015": {"2024-05-03", "08/30/2015"},
		"ticket #1042 and ticket TKT_1042#2":        {"tkt_1042#2"},
		// Ordinals and sizes are codes too; a value that is one is
		// what the question means.
		"the 5th tallest, over 180cm":                 {"5th", "180cm"},
		"in 2024, 3.5 stars, v1.2, A4, a--1, -5, x-y": nil,
	} {
		require.Equal(t, want, valueLiterals(in), in)
	}
}

// TestQueryAddressIsOneValue: an e-mail address is read as the word
// "email" (what the query filters on), its fragments are no words of the
// question, and a sampled value that is the address is a full match while
// one sharing only its fragments ("Amir") is none.
func TestQueryAddressIsOneValue(t *testing.T) {
	q := newQuery("tickets from Amir.Bakker710@webpost.example", nil, nil)
	require.Equal(t, []string{"amir.bakker710@webpost.example"}, q.literals)
	require.Equal(t, []string{"tickets", "email"}, q.content.words)
	require.False(t, q.words["amir"])

	tab := testTable("shop", "customers", "first_name", "email")
	c := &Candidate{Table: tab, Values: []ValueHit{
		{Column: "first_name", Value: "Amir"},
		{Column: "email", Value: "amir.bakker710@webpost.example"},
	}}
	scoreValues(q, c, valueWordFilter{named: map[string]bool{}, colNamed: map[string]bool{}, marked: map[string]bool{}})
	require.Equal(t, []ValueHit{{Column: "email", Value: "amir.bakker710@webpost.example", Match: 1}}, c.Values)
	require.Equal(t, 1.0, c.valFull)

	// A host or URL is looked up whole too, and its words stay.
	q = newQuery("visits from www.example.com", nil, nil)
	require.Equal(t, []string{"www.example.com"}, q.literals)
	require.True(t, q.words["example"])
}

// A thousands suffix is read as the number it abbreviates and a duration
// gets its unit word; metres, kilograms, decades, ordinals, letters
// inside a word or a dotted version, and quoted values stay as written.
func TestReadMagnitudes(t *testing.T) {
	for in, want := range map[string]string{
		"which employees earn more than 100k?": "which employees earn more than 100000?",
		"salary above $2.5K":                   "salary above $2500",
		"1.2345k":                              "1234.5",
		"100k-200k":                            "100000-200000",
		"the 200m freestyle":                   "the 200m freestyle",
		"10kg of flour":                        "10kg of flour",
		"k2 and 3.5.2k":                        "k2 and 3.5.2k",
		"rank 12k3":                            "rank 12k3",
		"ask about keys":                       "ask about keys",
		"tickets opened in the last 24h":       "tickets opened in the last 24 hours",
		"past 30d, 2wks or 3mos, 1yr":          "past 30 days, 2 weeks or 3 months, 1 years",
		"3D printers, 2d arrays and 1990s":     "3D printers, 2 days arrays and 1990s",
		"the 200m and 4x100m relay, 5min":      "the 200m and 4x100m relay, 5min",
		"3rd 4th 2hx h24 24hours":              "3rd 4th 2hx h24 24hours",
		"the model 'X 100K' sold 2k":           "the model 'X 100K' sold 2000",
		`orders of "Plan 30d" in the last 30d`: `orders of "Plan 30d" in the last 30 days`,
		"the students' grades in the last 30d": "the students' grades in the last 30 days",
		"an unclosed 'quote, 5k":               "an unclosed 'quote, 5000",
		"mail 100k@example.com about 5k":       "mail 100k@example.com about 5000",
		"see www.24h.example/30d in 24h":       "see www.24h.example/30d in 24 hours",
	} {
		require.Equal(t, want, readMagnitudes(in), in)
	}
}
