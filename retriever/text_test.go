package retriever

import (
	"testing"

	"github.com/stretchr/testify/require"
)

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
	} {
		require.Equal(t, want, readMagnitudes(in), in)
	}
}
