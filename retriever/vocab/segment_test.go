package vocab

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSegment pins how run-together identifiers read: the names PostgreSQL
// folds from unquoted camelCase, and the ones that must stay whole.
func TestSegment(t *testing.T) {
	l := Default()
	for token, want := range map[string]string{
		"customername":     "customer name",
		"countrylanguage":  "country language",
		"releasedate":      "release date",
		"driverid":         "driver id",
		"genreid":          "genre id",
		"cardid":           "card id", // not "car did": stop words are no part
		"ismale":           "is male",
		"custcntry":        "cust cntry",
		"orderplaceddate":  "order placed date",
		"amountpaidinfull": "amount paid in full",
		"quantityperunit":  "quantity per unit", // not "quantity peru nit"
		"postalcode":       "postal code",
	} {
		require.Equal(t, want, strings.Join(l.Segment(token), " "), token)
	}
	for _, token := range []string{
		"singer", "customer", "quantity", // words
		"qty", "xqzvwk", // an abbreviation; no reading
		"temperaturef",        // the likeliest reading keeps an unknown "f"
		"edispl",              // no "edi spl"
		"orders", "customers", // inflections of words
		"Customername", "customer_name", // not a folded token
	} {
		require.Nil(t, l.Segment(token), token)
	}
}

// TestSegmentWithoutVectors: no word vectors, no frequencies, no split.
func TestSegmentWithoutVectors(t *testing.T) {
	l, err := Parse(Sources{})
	require.NoError(t, err)
	require.Nil(t, l.Segment("customername"))
}
