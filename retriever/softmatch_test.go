package retriever

import (
	"fmt"
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
	singer.prepare(nil, nil)
	stadium.prepare(nil, nil)
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

// TestExpMatchBothWays: expMatch walks whichever side is smaller; both
// walks give the brute-force maximum, whichever side is larger.
func TestExpMatchBothWays(t *testing.T) {
	brute := func(qe map[string]float64, self float64, exact map[string]bool, schemaExp map[string]float64) float64 {
		best := self
		for e, w := range qe {
			if exact[e] {
				best = max(best, w)
			} else if v := schemaExp[e]; v > 0 {
				best = max(best, w*v)
			}
		}
		return best
	}
	exact := map[string]bool{"singer": true, "name": true, "absent": false}
	schemaExp := map[string]float64{"vocalist": 0.5, "singer": 0.9, "nation": 0.4, "zero": 0}
	small := map[string]float64{"vocalist": 0.8, "absent": 0.7}
	large := map[string]float64{"singer": 0.3, "nation": 0.9, "absent": 0.95, "zero": 0.9}
	for i := range 40 {
		large[fmt.Sprintf("filler%d", i)] = 0.99
	}
	for _, qe := range []map[string]float64{small, large} {
		q := &Query{exp: map[string]map[string]float64{"w": qe}}
		require.Equal(t, brute(qe, schemaExp["w"], exact, schemaExp), q.expMatch("w", exact, schemaExp))
	}
}
