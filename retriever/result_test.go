package retriever

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// atrium retrieve --json says when nothing was chosen and why, and which
// words the scorer read in the schema's words; an empty ranking is an
// empty list, not null.
func TestResultJSONSaysWhyNothingIsChosen(t *testing.T) {
	b, err := json.Marshal(ResultJSON(&Result{Question: "Good morning!", Abstained: true, AbstainReason: courtesyReason}))
	require.NoError(t, err)
	var got map[string]any
	require.NoError(t, json.Unmarshal(b, &got))
	require.Equal(t, true, got["abstained"])
	require.Equal(t, courtesyReason, got["abstain_reason"])
	require.Equal(t, []any{}, got["tables"])
	require.NotContains(t, got, "rewrites")

	b, err = json.Marshal(ResultJSON(&Result{Question: "Which nation has the most puppies?",
		Rewrites: []Rewrite{{From: "nation", To: "country"}, {From: "puppies", To: "dogs"}}}))
	require.NoError(t, err)
	got = nil
	require.NoError(t, json.Unmarshal(b, &got))
	require.Equal(t, false, got["abstained"])
	require.NotContains(t, got, "abstain_reason")
	require.Equal(t, []any{"nation→country", "puppies→dogs"}, got["rewrites"])
}
