package retriever

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lexStatsFor builds lexStats over a catalog of n tables with the given
// lexeme frequencies, every word its own lexeme (no server needed: the word
// cache already holds them).
func lexStatsFor(n int, ndoc map[string]int, words ...string) *lexStats {
	s := &lexStats{version: 1, tables: n, ndoc: ndoc}
	s.mu.words = map[string]wordStats{"the": {}} // a stop word has no lexeme
	for _, w := range words {
		s.mu.words[w] = wordStats{lexemes: []string{w}}
	}
	return s
}

// match runs matchQuery with the cached word stats.
func match(s *lexStats, terms ...string) string {
	return s.matchQuery(terms, s.mu.words)
}

func TestMatchQuerySmallCatalogRanksEveryMatch(t *testing.T) {
	s := &lexStats{version: 1, tables: 80}
	q := match(s, "singer", "concert", "the")
	assert.Equal(t, "singer | concert | the", q)
}

func TestMatchQueryKeepsEveryTermWithinBudget(t *testing.T) {
	s := lexStatsFor(100_000, map[string]int{"singer": 300, "concert": 600}, "singer", "concert")
	q := match(s, "singer", "concert", "the")
	assert.Equal(t, "singer | concert | the", q)
}

func TestMatchQueryDropsCommonTermsForPairs(t *testing.T) {
	s := lexStatsFor(100_000, map[string]int{"rare": 40, "order": 6000, "customer": 5000, "city": 9000},
		"rare", "order", "customer", "city")
	q := match(s, "order", "customer", "the", "city", "rare")
	// 5000·6000/100000 = 300 and 5000·9000/100000 = 450 fit the budget
	// after rare; 6000·9000/100000 = 540 no longer does.
	assert.Equal(t, "rare | (customer & order) | (customer & city)", q)
}

func TestMatchQueryLoneCommonTerm(t *testing.T) {
	s := lexStatsFor(100_000, map[string]int{"order": 6000}, "order")
	q := match(s, "order", "the")
	assert.Equal(t, "order", q)
}

func TestMatchQueryAlwaysKeepsTheRarestPair(t *testing.T) {
	s := lexStatsFor(10_000, map[string]int{"a": 9000, "b": 8000, "c": 7000}, "a", "b", "c")
	q := match(s, "a", "b", "c")
	assert.Equal(t, "(c & b)", q)
}

func TestRareValueTerms(t *testing.T) {
	words := map[string]wordStats{"zagreb": {values: valueMatchCap + 1}, "aruba": {values: 3}}
	assert.Equal(t, []string{"aruba", "kyle"}, rareValueTerms([]string{"zagreb", "aruba", "kyle"}, words))
}

// TestRetrieveLargeCatalogBoundsMatches grows the shop catalog past
// lexMatchBudget with filler tables that all name "order" and hold the
// value London, and checks that retrieval takes the bounded path (lexeme
// frequencies loaded, the common value word left out of the value lookup)
// and still finds the shop tables.
func TestRetrieveLargeCatalogBoundsMatches(t *testing.T) {
	pool, emb := setupCatalog(t)
	ctx := context.Background()
	fillers := lexMatchBudget + 200
	_, err := pool.Exec(ctx, `
INSERT INTO atrium.tables (schema_name, table_name, kind, name_text, value_text)
SELECT 'filler', 'order_archive_' || i, 'table', 'filler order archive ' || i, 'London'
FROM generate_series(1, $1) AS i`, fillers)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `
INSERT INTO atrium.value_index (table_id, column_name, value)
SELECT id, c.col, c.val FROM atrium.tables,
       (VALUES ('city', 'London'), ('opened', '2024-05-03')) AS c(col, val)
WHERE schema_name = 'filler'`)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `UPDATE atrium.catalog_state SET version = version + 1`)
	require.NoError(t, err)

	r, err := New(pool, Config{}, Options{Embedder: emb})
	require.NoError(t, err)
	res, err := r.Retrieve(ctx, "Which customers from London placed an order?")
	require.NoError(t, err)

	st := r.lexStats.cur.Load()
	require.NotNil(t, st)
	require.Equal(t, res.CatalogVersion, st.version)
	require.NotNil(t, st.ndoc, "a catalog of %d tables must load lexeme frequencies", st.tables)
	assert.GreaterOrEqual(t, st.ndoc["order"], fillers)
	ws := st.mu.words
	assert.Greater(t, ws["london"].values, valueMatchCap)
	assert.Equal(t, []string{"custom"}, ws["customers"].lexemes)
	assert.Equal(t, "customers", st.matchQuery([]string{"customers", "order"}, ws))

	var cands []string
	for _, c := range res.Candidates {
		cands = append(cands, c.Table.QualifiedName())
	}
	assert.Contains(t, cands, "shop.customers")
	assert.Contains(t, cands, "shop.orders")

	// A pasted literal is counted like a word: a date every filler holds
	// is left out of the value lookup too.
	_, err = r.Retrieve(ctx, "Which customers from London placed an order on 2024-05-03?")
	require.NoError(t, err)
	assert.Greater(t, st.mu.words["'2024-05-03'"].values, valueMatchCap)
}
