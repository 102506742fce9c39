package question

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestQuestionNothingAnswers: a question no table answers gets 42P01 with
// the closest tables in its DETAIL, and the LLM is never asked (issue 10,
// "knowing when nothing answers"). A question the catalog does answer still
// reaches the LLM.
func TestQuestionNothingAnswers(t *testing.T) {
	e := newEnv(t, envOpts{})
	c := e.connect(t, "postgres")

	a := c.ask(t, "/* nl: What will the weather be in Lisbon tomorrow? */")
	require.NotNil(t, a.err, "an off-topic question must fail")
	require.Equal(t, "42P01", a.err.Code, a.err.Message)
	require.Contains(t, a.err.Detail, "Closest tables: ")
	require.Contains(t, a.err.Detail, "Retrieval chose none: ", "says which rule abstained")
	require.Empty(t, e.llm.Requests(), "the LLM must not be asked when no table answers")

	// RETRIEVE shows the same: nothing chosen.
	r := c.ask(t, "RETRIEVE What will the weather be in Lisbon tomorrow?")
	require.Nil(t, r.err)
	for _, row := range r.rows {
		require.Equal(t, "f", row[4], "no table is chosen for an off-topic question: %v", row)
	}

	require.Len(t, r.notices, 1, "RETRIEVE says why nothing is chosen")
	require.Contains(t, r.notices[0], "atrium: no table chosen: ")

	// A greeting alone is not searched at all, and says so.
	g := c.ask(t, "/* nl: Good morning! Are you there? */")
	require.NotNil(t, g.err, "a greeting must fail")
	require.Equal(t, "42P01", g.err.Code, g.err.Message)
	require.Contains(t, g.err.Detail, "only a greeting or a courtesy")
	g = c.ask(t, "RETRIEVE Hello, how are you today?")
	require.Nil(t, g.err)
	require.Empty(t, g.rows)
	require.Len(t, g.notices, 1)
	require.Contains(t, g.notices[0], "only a greeting or a courtesy")
	require.Empty(t, e.llm.Requests(), "the LLM must not be asked when no table answers")

	// A question the catalog answers goes to the LLM.
	_ = c.ask(t, "/* nl: which customers live in London */")
	require.NotEmpty(t, e.llm.Requests())
}
