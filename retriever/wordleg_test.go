package retriever

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/retriever/vocab"
)

// A question in the user's own words reaches the table through the word
// vectors when no word and no vocabulary relation links them: "vendors"
// shares nothing with suppliers in the index, but GloVe puts them close
// (cosine 0.65).
func TestWordLegFindsUnlinkedSynonym(t *testing.T) {
	lx := vocab.Default()
	tables := map[int64][numFields]string{
		1: {"employees", "employee_id first_name last_name hire_date", "", ""},
		2: {"orders", "order_id customer_id ordered_at total", "", ""},
		3: {"suppliers", "supplier_id company_name country", "", ""},
		4: {"warehouses", "warehouse_id city capacity", "", ""},
		5: {"exchange_rates", "base_currency quote_currency rate day", "", ""},
	}
	ix := testIndex(lx, tables)
	q := newQuery("How many vendors do we work with?", nil, nil)
	q.setExpansions(lx, 0.5)
	require.Empty(t, ix.top(ix.score(questionTerms(q, lx, 0.5)), 5), "no word of the question is in the index")
	near := ix.words.nearest(questionWordVector(q), 2)
	require.Len(t, near, 2)
	require.Equal(t, int64(3), ix.ids[near[0]])
}

// Without word vectors the index holds none and the leg is off.
func TestWordLegOffWithoutVectors(t *testing.T) {
	ix := testIndex(nil, map[int64][numFields]string{1: {"suppliers", "supplier_id", "", ""}})
	require.Nil(t, ix.words)
	require.Nil(t, ix.words.nearest([]float32{1}, 5))
	require.Nil(t, questionWordVector(newQuery("Which vendors?", nil, nil)))
}

// The leg's tables take the last places of C, nearest first, and the
// candidates keep the hybrid order; places it leaves free go by rank.
func TestReserveWordLeg(t *testing.T) {
	var ranked []*Candidate
	for i := int64(1); i <= 60; i++ {
		ranked = append(ranked, &Candidate{Table: &TableInfo{ID: i}})
	}
	ids := func(cs []*Candidate) []int64 {
		var out []int64
		for _, c := range cs {
			out = append(out, c.Table.ID)
		}
		return out
	}
	// Seven tables in the leg: two already among the first 45, five below.
	word := map[int64]int{3: 1, 58: 2, 47: 3, 60: 4, 52: 5, 10: 6, 55: 7}
	kept := reserveWordLeg(ranked, 50, word)
	require.Len(t, kept, 50)
	want := append(ids(ranked[:45]), 47, 52, 55, 58, 60)
	require.Equal(t, want, ids(kept))

	// One table of the leg below the first 45: the other four places go
	// to ranks 46-49.
	kept = reserveWordLeg(ranked, 50, map[int64]int{59: 1})
	require.Equal(t, append(ids(ranked[:49]), 59), ids(kept))

	// A narrow C gives the leg a tenth of its places: 2 of 20, none of 9.
	kept = reserveWordLeg(ranked, 20, word)
	require.Equal(t, append(ids(ranked[:18]), 47, 58), ids(kept))
	require.Equal(t, ids(ranked[:9]), ids(reserveWordLeg(ranked, 9, word)))

	// No leg, or fewer candidates than places: the plain cut.
	require.Equal(t, ids(ranked[:50]), ids(reserveWordLeg(ranked, 50, nil)))
	require.Equal(t, ids(ranked[:10]), ids(reserveWordLeg(ranked[:10], 50, word)))
}

// The leg's cosine is the de-quantised dot product of the unit vectors:
// a table is as close to its own vector as quantisation allows, and a
// doc without a vector has none.
func TestWordVectorCosine(t *testing.T) {
	lx := vocab.Default()
	ix := testIndex(lx, map[int64][numFields]string{
		1: {"suppliers", "supplier_id company_name country", "", ""},
		2: {"xqzv", "xqzv_id", "", ""},
	})
	q := newQuery("How many vendors do we work with?", nil, nil)
	q.setExpansions(lx, 0.5)
	qv := questionWordVector(q)
	require.NotNil(t, qv)
	c := ix.words.cosine(ix.docOf[1], qv)
	require.Greater(t, c, 0.3, "vendors is near suppliers")
	require.Less(t, c, 1.0)
	require.True(t, math.IsNaN(ix.words.cosine(ix.docOf[2], qv)), "no word of xqzv has a vector")
	require.True(t, math.IsNaN(ix.words.cosine(ix.docOf[1], qv[:3])))
}
