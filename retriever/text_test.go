package retriever

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A thousands suffix is read as the number it abbreviates; a metre, a
// kilogram or a k inside a word or a dotted version stays as written.
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
	} {
		require.Equal(t, want, readMagnitudes(in), in)
	}
}
