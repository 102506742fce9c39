package retriever

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/retriever/vocab"
)

// TestSoftMatch checks the word-vector features on a synonym the vocabulary
// relations miss in one direction or the other: the synonym question rates
// the singer table well above the stadium table, a literal match counts 1,
// and without vectors the features are 0 (never a panic).
func TestSoftMatch(t *testing.T) {
	singer := testTable("music", "singer", "singer_id", "name", "nationality")
	stadium := testTable("music", "stadium", "stadium_id", "location", "capacity")
	singer.prepare(nil)
	stadium.prepare(nil)
	ask := func(text string) *Query {
		q := newQuery(text, nil, nil)
		q.setExpansions(vocab.Default(), 0.5)
		return q
	}
	q := ask("Which vocalists are French?")
	sn, sq, _ := softMatch(q, singer)
	sn2, sq2, _ := softMatch(q, stadium)
	require.Greater(t, sn, 0.5)
	require.Greater(t, sn, sn2+0.2)
	require.Greater(t, sq, sq2)

	sn, _, _ = softMatch(ask("List every singer"), singer)
	require.Equal(t, 1.0, sn, "a literal match")

	_, _, sc := softMatch(ask("How large is each arena's seating?"), stadium)
	_, _, sc2 := softMatch(ask("How large is each arena's seating?"), singer)
	require.Greater(t, sc, sc2, "columns: capacity/location against seating")

	bare := newQuery("Which vocalists are French?", nil, nil)
	a, b, c := softMatch(bare, singer)
	require.Zero(t, a+b+c)
}
