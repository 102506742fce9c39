package vocab

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGuessAbbreviation: with no abbreviation list, truncations and
// dropped letters still lead to the word; words and listed abbreviations
// get no guess.
func TestGuessAbbreviation(t *testing.T) {
	src := EmbeddedSources()
	src.Abbrev = nil
	l, err := Parse(src)
	require.NoError(t, err)
	for token, want := range map[string]string{
		"cntry": "country",    // letters dropped
		"bldg":  "building",   // letters dropped
		"dept":  "department", // truncation
		"mgmt":  "management",
	} {
		g := l.GuessAbbreviation(token)
		require.NotEmpty(t, g, token)
		require.Equal(t, want, g[0].Term, token)
		require.Equal(t, KindAbbreviation, g[0].Kind)
		require.Less(t, g[0].Weight, 0.7, "below the list's weights")
	}
	for _, token := range []string{"singer", "qt", "abbreviations", "Cntry"} {
		require.Nil(t, l.GuessAbbreviation(token), token)
	}
	require.Nil(t, Default().GuessAbbreviation("cntry"), "listed: ExpandIdentifier answers")
	require.Nil(t, func() *Lexicon { l, _ := Parse(Sources{}); return l }().GuessAbbreviation("cntry"), "no vectors")
}
