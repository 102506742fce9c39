package question

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/proxy"
)

// TestParseFeedbackForms: the lexer finds nl-feedback in block and line
// comments and keeps the text as written (a corrected SQL's spacing and
// literals intact).
func TestParseFeedbackForms(t *testing.T) {
	for _, tc := range []struct {
		sql, text string
	}{
		{"/* nl-feedback: good */", "good"},
		{"/* NL-FEEDBACK:GOOD */;", "GOOD"},
		{"-- nl-feedback: wrong — use net amount", "wrong — use net amount"},
		{"-- Metabase:: userID: 1\n/* nl-feedback: wrong */", "wrong"},
		{"/* nl-feedback: wrong — SELECT  'a  b'\n  FROM t */", "wrong — SELECT  'a  b'\n  FROM t"},
		{"/* nl-feedback: */", ""},
	} {
		q, ok := Parse(tc.sql)
		require.True(t, ok, tc.sql)
		require.Equal(t, Feedback, q.Form, tc.sql)
		require.Equal(t, tc.text, q.Text, tc.sql)
	}
	for _, sql := range []string{"/* nl-feedback: good */ SELECT 1", "SELECT '/* nl-feedback: good */'", "/* nl-feedbacks: good */"} {
		q, ok := Parse(sql)
		require.False(t, ok && q.Form == Feedback, sql)
	}
}

// TestParseVerdict: good, and wrong alone or with every separator; anything
// else is SQLSTATE 22023 with a hint showing both forms.
func TestParseVerdict(t *testing.T) {
	for _, tc := range []struct {
		in   string
		v    Verdict
		text string
	}{
		{"good", VerdictGood, ""},
		{" Good ", VerdictGood, ""},
		{"wrong", VerdictWrong, ""},
		{"WRONG", VerdictWrong, ""},
		{"wrong — use net amount", VerdictWrong, "use net amount"},
		{"wrong—use net amount", VerdictWrong, "use net amount"},
		{"wrong – use net amount", VerdictWrong, "use net amount"},
		{"wrong - use net amount", VerdictWrong, "use net amount"},
		{"wrong: use net amount", VerdictWrong, "use net amount"},
		{"wrong:use net amount", VerdictWrong, "use net amount"},
		{"wrong use net amount", VerdictWrong, "use net amount"},
		{"wrong\n\tSELECT 1", VerdictWrong, "SELECT 1"},
		{"wrong —", VerdictWrong, ""},
		{"Wrong — SELECT 'a  -- b'", VerdictWrong, "SELECT 'a  -- b'"},
	} {
		v, text, err := ParseVerdict(tc.in)
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.v, v, tc.in)
		require.Equal(t, tc.text, text, tc.in)
	}
	for _, in := range []string{"", "great", "goodish", "good — thanks", "wrongly done", "ok", "bad"} {
		_, _, err := ParseVerdict(in)
		var pe *proxy.Error
		require.ErrorAs(t, err, &pe, in)
		require.Equal(t, CodeBadFeedback, pe.Code)
		require.Contains(t, pe.Hint, "/* nl-feedback: good */")
		require.Contains(t, pe.Hint, "/* nl-feedback: wrong — ")
	}
}

// TestIsSQL: text after "wrong" is a corrected SQL when PostgreSQL's parser
// reads a statement from it, words otherwise.
func TestIsSQL(t *testing.T) {
	for _, s := range []string{"SELECT 1", "select full_name from shop.customers;", "DELETE FROM t", "WITH a AS (SELECT 1) SELECT * FROM a"} {
		require.True(t, isSQL(s), s)
	}
	for _, s := range []string{"use net amount", "the total should exclude refunds", "only 2024 orders", "'quoted words'", ";"} {
		require.False(t, isSQL(s), s)
	}
}
