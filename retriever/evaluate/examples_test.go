package evaluate

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/catalog/benchload"
)

// Positions count within each database, in file order; unanswerable
// questions are never examples.
func TestSplitExamples(t *testing.T) {
	qs := []benchload.Question{
		{DBID: "a", Question: "a0", Query: "SELECT 1"},
		{DBID: "b", Question: "b0", Query: "SELECT 1"},
		{DBID: "A", Question: "a1", Query: "SELECT 1"},
		{DBID: "x", Question: "off-topic"},
		{DBID: "a", Question: "a2", Query: "SELECT 1"},
		{DBID: "b", Question: "b1", Query: "SELECT 1"},
		{DBID: "a", Question: "a3", Query: "SELECT 1"},
	}
	ex, ev := SplitExamples(qs)
	names := func(qs []benchload.Question) []string {
		var out []string
		for _, q := range qs {
			out = append(out, q.Question)
		}
		return out
	}
	require.Equal(t, []string{"a0", "b0", "a2"}, names(ex))
	require.Equal(t, []string{"a1", "off-topic", "b1", "a3"}, names(ev))
}
