package retriever

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/retriever/vocab"
)

func testIndex(lx *vocab.Lexicon, tables map[int64][numFields]string) *lexIndex {
	b := newLexIndexBuilder(1, identifierExpander(lx))
	if lx != nil {
		b.withWordVectors(lx.Embeddings())
	}
	for id := int64(1); id <= int64(len(tables)); id++ {
		b.add(id, tables[id])
	}
	return b.done()
}

// A word every table has must count less than a rare one: ts_rank_cd, which
// has no inverse document frequency, ranked the table with more "name"
// columns first.
func TestBM25FWeighsRareWords(t *testing.T) {
	tables := map[int64][numFields]string{}
	for i := int64(1); i <= 20; i++ {
		tables[i] = [numFields]string{"thing", "id name title_name short_name", "", ""}
	}
	tables[21] = [numFields]string{"singer", "singer_id name", "", ""}
	ix := testIndex(nil, tables)
	q := newQuery("name of every singer", nil, nil)
	scores := ix.score(questionTerms(q, nil, 0))
	require.Equal(t, int64(21), ix.top(scores, 3)[0])
}

// Identifier abbreviations are expanded at index time (custCntry → customer
// country), below an exact match.
func TestBM25FExpandsIdentifiers(t *testing.T) {
	lx := vocab.Default()
	tables := map[int64][numFields]string{
		1: {"custOrders", "ordId custCntry amt", "", ""},
		2: {"employees", "empId deptName", "", ""},
		3: {"customer", "customer_id country", "", ""},
	}
	ix := testIndex(lx, tables)
	q := newQuery("Which customers live in which country?", nil, nil)
	scores := ix.score(questionTerms(q, lx, 0.5))
	top := ix.top(scores, 3)
	require.Equal(t, []int64{3, 1}, top, "exact names first, the abbreviated table second, hr never")
}

// Identifiers PostgreSQL folded from unquoted camelCase (customerorders,
// custcntry) are read as their words, in the index and in the table's
// analysis, while names that are words stay whole.
func TestFoldedIdentifiers(t *testing.T) {
	lx := vocab.Default()
	tables := map[int64][numFields]string{
		1: {"customerorders", "orderid custcntry orderamount", "", ""},
		2: {"employees", "empid deptname", "", ""},
		3: {"countrylanguage", "countrycode language", "", ""},
	}
	ix := testIndex(lx, tables)
	q := newQuery("Which customers placed orders in each country?", nil, nil)
	require.Equal(t, int64(1), ix.top(ix.score(questionTerms(q, lx, 0.5)), 3)[0])

	exp := identifierExpander(lx)
	ti := &TableInfo{ID: 1, Schema: "public", Name: "customerorders", Columns: []ColumnInfo{{Name: "orderid"}, {Name: "custcntry"}, {Name: "singer"}}}
	ti.prepare(exp, lx.Embeddings())
	require.Equal(t, []string{"customer", "orders"}, ti.nameA.words)
	require.True(t, ti.nameA.set[stem("customerorders")], "the token stays an alias: a question may repeat it")
	require.Equal(t, []string{"order", "id"}, ti.colA[0].words)
	require.Equal(t, []string{"cust", "cntry"}, ti.colA[1].words)
	require.Equal(t, []string{"singer"}, ti.colA[2].words)
	require.Greater(t, ti.colExp[stem("country")], 0.0, "the parts' abbreviations expand too")
	st := statsFor(newQuery("How many orders per customer?", nil, nil), ti)
	require.True(t, st.covered[stem("customer")] && st.covered[stem("orders")], "covered: %v", st.covered)
}

// Question-side expansions reach schema words the question does not use,
// weighted below the exact word.
func TestQuestionTermsExpand(t *testing.T) {
	lx := vocab.Default()
	terms := questionTerms(newQuery("How many vocalists are there?", nil, nil), lx, 0.5)
	w := map[string]float64{}
	for _, qt := range terms {
		w[qt.stem] = qt.weight
	}
	require.Equal(t, 1.0, w[stem("vocalists")])
	require.Greater(t, w["singer"], 0.0)
	require.Less(t, w["singer"], 1.0)
}

// On a large catalog the index is built in the background: the question
// that finds it missing is answered at once (lexical list by ts_rank_cd,
// index nil) and a later one uses the index.
func TestLexIndexBuildsInBackgroundOnLargeCatalogs(t *testing.T) {
	pool, _ := setupCatalog(t)
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	var c lexIndexCache
	ix, err := c.get(ctx, pool, 7, syncIndexTables+1, log)
	require.NoError(t, err)
	require.Nil(t, ix, "no index yet: the caller falls back to ts_rank_cd")
	for ix == nil {
		time.Sleep(10 * time.Millisecond)
		ix, err = c.get(ctx, pool, 7, syncIndexTables+1, log)
		require.NoError(t, err)
	}
	require.Equal(t, int64(7), ix.version)
	require.Len(t, ix.ids, 6, "every table of shop and zoo")

	// A small catalog builds while the question waits.
	var small lexIndexCache
	ix, err = small.get(ctx, pool, 8, 6, log)
	require.NoError(t, err)
	require.NotNil(t, ix)
	scores := ix.score(questionTerms(newQuery("which keepers look after zebras", nil, nil), nil, 0))
	names := map[int64]bool{}
	for _, id := range ix.top(scores, 1) {
		names[id] = true
	}
	require.Len(t, names, 1)
}

// Relative time expressions leave the question's content words and the
// lexical/value search terms; a determiner or unit alone stays.
func TestRelativeTimeNamesNoTable(t *testing.T) {
	cases := []struct {
		q    string
		gone []string
		kept []string
	}{
		{"How many tickets did each support agent resolve last month?", []string{"last", "month"}, []string{"ticket", "agent", "resolve"}},
		{"Orders placed in the past 3 years", []string{"past", "3", "years"}, []string{"orders", "placed"}},
		{"invoices issued two weeks ago or today", []string{"two", "weeks", "ago", "today"}, []string{"invoices", "issued"}},
		{"What is the last name of each student?", nil, []string{"last", "name", "student"}},
		{"Which year had the most concerts?", nil, []string{"year", "concerts"}},
	}
	for _, c := range cases {
		q := newQuery(c.q, nil, nil)
		terms := map[string]bool{}
		for _, w := range q.terms {
			terms[w] = true
		}
		for _, w := range c.gone {
			require.False(t, terms[w], "%q: %q is a search term", c.q, w)
			require.False(t, q.content.set[stem(w)], "%q: %q is a content word", c.q, w)
		}
		for _, w := range c.kept {
			require.True(t, terms[w] || q.content.set[stem(w)], "%q: %q dropped", c.q, w)
		}
	}
}
