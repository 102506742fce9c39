package retriever

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/catalog"
	"github.com/atriumdb/atrium/retriever/vocab"
)

func reasonsOf(res *Result, name string) []string {
	for _, t := range res.Tables {
		if t.Table.QualifiedName() == name {
			return t.Reasons
		}
	}
	return nil
}

func addExample(t *testing.T, pool *pgxpool.Pool, question, sql string, tables ...string) {
	t.Helper()
	if tables == nil {
		tables = []string{}
	}
	_, err := pool.Exec(context.Background(), `INSERT INTO atrium.examples (question, sql, tables) VALUES ($1, $2, $3)`, question, sql, tables)
	require.NoError(t, err)
}

// A question the scorer alone abstains on ("buyers", "units" name no
// column) gets the tables of a close example's SQL, marked "example".
func TestExamplesLiftSimilarQuestion(t *testing.T) {
	pool, emb := setupCatalog(t)
	ctx := context.Background()
	// With the schema rewrite "buyers" is scored as customers, which
	// raises the window's best logit and with it the relative threshold:
	// the example weight of 4 no longer lifted order_lines over it, the
	// re-chosen 6 does (docs/retrieval.md, step 8).
	r, err := New(pool, Config{}, Options{Embedder: emb})
	require.NoError(t, err)
	const q = "Which buyers bought the most units?"
	before, err := r.Retrieve(ctx, q)
	require.NoError(t, err)
	require.NotContains(t, chosenNames(before), "shop.order_lines")

	addExample(t, pool, "Which buyers bought the most units last year?",
		`SELECT c.full_name, sum(l.quantity) FROM shop.customers c JOIN shop.orders o USING (customer_id) JOIN shop.order_lines l USING (order_id) GROUP BY 1 ORDER BY 2 DESC`)
	res, err := r.RetrieveAsk(ctx, Ask{Question: q})
	require.NoError(t, err)
	require.False(t, res.Abstained)
	got := chosenNames(res)
	require.Contains(t, got, "shop.customers")
	require.Contains(t, got, "shop.order_lines")
	require.Contains(t, reasonsOf(res, "shop.order_lines"), ReasonExample)
	require.Len(t, res.Examples, 1)
	ex := res.Examples[0]
	require.False(t, ex.Exact)
	require.GreaterOrEqual(t, ex.Similarity, DefaultExampleGate)
	require.Less(t, ex.Similarity, 1.0)
	require.ElementsMatch(t, []string{"shop.customers", "shop.orders", "shop.order_lines"}, ex.Tables)
	require.Equal(t, ex.Similarity, res.NearestExample)

	// The baseline path (evaluation's "-no-examples") ignores them.
	off, err := r.RetrieveWith(ctx, q, RetrieveOptions{NoLearning: true})
	require.NoError(t, err)
	require.Equal(t, chosenNames(before), chosenNames(off))
	require.Empty(t, off.Examples)
}

// An example about something else lends nothing: its tables are not
// forced in, and the question's own tables are unchanged.
func TestUnrelatedExampleDoesNotForceTables(t *testing.T) {
	pool, emb := setupCatalog(t)
	ctx := context.Background()
	r, err := New(pool, Config{}, Options{Embedder: emb})
	require.NoError(t, err)
	const q = "Which customers placed orders in March?"
	before, err := r.Retrieve(ctx, q)
	require.NoError(t, err)

	addExample(t, pool, "How many animals does each keeper look after?",
		`SELECT k.name, count(*) FROM zoo.keepers k JOIN zoo.animals a ON a.keeper = k.name GROUP BY 1`)
	addExample(t, pool, "Which species live in the zoo?", `SELECT DISTINCT species FROM zoo.animals`)
	res, err := r.Retrieve(ctx, q)
	require.NoError(t, err)
	require.Equal(t, chosenNames(before), chosenNames(res))
	for _, name := range chosenNames(res) {
		require.NotContains(t, name, "zoo.")
	}
	for _, tb := range res.Tables {
		require.NotContains(t, tb.Reasons, ReasonExample, tb.Table.QualifiedName())
	}
	require.Less(t, res.NearestExample, DefaultExampleGate)
}

// The index follows atrium.catalog_state.learning_version: an example
// added, disabled or edited after the first question is seen by the next.
func TestLearningVersionReloadsIndex(t *testing.T) {
	pool, emb := setupCatalog(t)
	ctx := context.Background()
	r, err := New(pool, Config{}, Options{Embedder: emb})
	require.NoError(t, err)
	const q = "How many keepers are there?"
	res, err := r.Retrieve(ctx, q)
	require.NoError(t, err)
	require.Empty(t, res.Examples)
	loaded := r.learn.cur.Load()
	require.NotNil(t, loaded)

	addExample(t, pool, "How many keepers work here?", `SELECT count(*) FROM zoo.keepers`)
	res, err = r.Retrieve(ctx, q)
	require.NoError(t, err)
	require.Len(t, res.Examples, 1)
	require.Equal(t, []string{"zoo.keepers"}, res.Examples[0].Tables)
	require.Greater(t, r.learn.cur.Load().version, loaded.version)

	// A question in between does not reload an unchanged index.
	cur := r.learn.cur.Load()
	_, err = r.Retrieve(ctx, q)
	require.NoError(t, err)
	require.Same(t, cur, r.learn.cur.Load())

	_, err = pool.Exec(ctx, `UPDATE atrium.examples SET enabled = false`)
	require.NoError(t, err)
	res, err = r.Retrieve(ctx, q)
	require.NoError(t, err)
	require.Empty(t, res.Examples)
}

// A reviewed glossary term named in a question (any word ending, any case)
// has its tables chosen, even where the scorer alone abstains; an
// unreviewed one is not used.
func TestGlossaryTermChoosesTables(t *testing.T) {
	pool, emb := setupCatalog(t)
	ctx := context.Background()
	r, err := New(pool, Config{}, Options{Embedder: emb})
	require.NoError(t, err)
	const q = "How many Big Spenders are there?"
	before, err := r.Retrieve(ctx, q)
	require.NoError(t, err)
	require.Empty(t, chosenNames(before))

	_, err = pool.Exec(ctx, `INSERT INTO atrium.glossary (term, definition, sql_fragment, tables) VALUES
		('big spender', 'A customer whose order lines add up to more than 100 units.', 'sum(quantity) > 100', '{shop.customers,order_lines,nosuch.table}'),
		('gold client', 'Proposed, not reviewed.', NULL, '{zoo.keepers}')`)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `UPDATE atrium.glossary SET reviewed = false WHERE term = 'gold client'`)
	require.NoError(t, err)

	res, err := r.Retrieve(ctx, q)
	require.NoError(t, err)
	require.False(t, res.Abstained)
	got := chosenNames(res)
	require.Contains(t, got, "shop.customers")
	require.Contains(t, got, "shop.order_lines")
	require.Contains(t, reasonsOf(res, "shop.order_lines"), ReasonGlossary)
	require.Len(t, res.Glossary, 1)
	g := res.Glossary[0]
	require.Equal(t, "big spender", g.Term)
	require.Equal(t, "sum(quantity) > 100", g.SQLFragment)
	require.Equal(t, []string{"shop.customers", "shop.order_lines"}, g.Tables, "the unknown table is dropped")

	// A word inside another word does not match; the unreviewed term is
	// never used.
	res, err = r.Retrieve(ctx, "list the gold clients and bigspenders")
	require.NoError(t, err)
	require.Empty(t, res.Glossary)
	require.NotContains(t, chosenNames(res), "zoo.keepers")
}

// A follow-up keeps the previous turn's tables; without the turn the same
// words retrieve what they retrieve alone.
//
// It holds with the word-vector embedder too, which the shipped scorer was
// not trained on: there the follow-up's own words lift shop.customers so far
// above shop.orders that the relative cut left orders out, bonus and all,
// until a follow-up that keeps one previous table kept them all.
func TestFollowUpKeepsPreviousTables(t *testing.T) {
	for _, kind := range []string{vocab.DefaultEmbedderKind, vocab.EmbedderWords} {
		t.Run(kind, func(t *testing.T) {
			emb, err := vocab.NewEmbedder(catalog.EmbedderConfig{Kind: kind})
			require.NoError(t, err)
			followUpKeepsPreviousTables(t, emb)
		})
	}
}

func followUpKeepsPreviousTables(t *testing.T, emb catalog.Embedder) {
	pool, emb := setupCatalogWith(t, emb)
	ctx := context.Background()
	r, err := New(pool, Config{}, Options{Embedder: emb})
	require.NoError(t, err)
	const q = "and only for London?"
	alone, err := r.Retrieve(ctx, q)
	require.NoError(t, err)
	require.NotContains(t, chosenNames(alone), "shop.orders")

	prev := &Turn{Question: "Which customers placed orders in March?", SQL: "SELECT ...", Tables: []string{"shop.customers", "shop.orders"}}
	res, err := r.RetrieveAsk(ctx, Ask{Question: q, Previous: prev})
	require.NoError(t, err)
	for _, tb := range res.Tables {
		t.Logf("%s %v %.2f %v", tb.Table.QualifiedName(), tb.Chosen, tb.Score, tb.Reasons)
	}
	require.Same(t, prev, res.Previous)
	require.False(t, res.Abstained)
	got := chosenNames(res)
	require.Contains(t, got, "shop.customers")
	require.Contains(t, got, "shop.orders")
	require.Contains(t, reasonsOf(res, "shop.orders"), ReasonFollowUp)
	for _, name := range got {
		require.NotContains(t, name, "zoo.")
	}

	// RetrieveAsk without a previous turn is Retrieve.
	same, err := r.RetrieveAsk(ctx, Ask{Question: q})
	require.NoError(t, err)
	require.Nil(t, same.Previous)
	require.Equal(t, chosenNames(alone), chosenNames(same))
}

// A question equal to an example's but for case, blanks and trailing
// punctuation is Exact, with similarity 1, and is not abstained on.
func TestExactExample(t *testing.T) {
	pool, emb := setupCatalog(t)
	ctx := context.Background()
	r, err := New(pool, Config{}, Options{Embedder: emb})
	require.NoError(t, err)
	addExample(t, pool, "Who are our best buyers?", `SELECT full_name FROM shop.customers ORDER BY customer_id LIMIT 3`)
	addExample(t, pool, "Who are our best keepers?", `SELECT name FROM zoo.keepers`)
	res, err := r.Retrieve(ctx, "  who are OUR best   buyers ?! ")
	require.NoError(t, err)
	require.NotEmpty(t, res.Examples)
	ex := res.Examples[0]
	require.True(t, ex.Exact)
	require.Equal(t, 1.0, ex.Similarity)
	require.Equal(t, "Who are our best buyers?", ex.Question)
	require.Contains(t, ex.SQL, "shop.customers")
	require.False(t, res.Abstained)
	require.Contains(t, chosenNames(res), "shop.customers")
	for _, e := range res.Examples[1:] {
		require.False(t, e.Exact)
	}

	res, err = r.Retrieve(ctx, "Who are our best buyers in London?")
	require.NoError(t, err)
	require.False(t, res.Examples[0].Exact)
}

// Tables an example names that the catalog does not hold (or that its SQL
// reads but cannot be resolved) are ignored; tables left empty are read
// from the SQL, CTE names excepted; SQL that does not parse lends nothing
// and breaks nothing.
func TestExampleTablesResolved(t *testing.T) {
	pool, emb := setupCatalog(t)
	ctx := context.Background()
	r, err := New(pool, Config{}, Options{Embedder: emb})
	require.NoError(t, err)
	addExample(t, pool, "How many orders did each customer place this spring?",
		`WITH recent AS (SELECT * FROM orders WHERE placed_on > now() - interval '90 days')
		 SELECT c.full_name, count(*) FROM recent r JOIN customers c USING (customer_id) JOIN secret.payroll p ON true GROUP BY 1`)
	addExample(t, pool, "How many orders did each customer place this summer?", `SELECT 1`, "nosuch.table", "shop.orders", "ghost")
	addExample(t, pool, "How many orders did each customer place this winter?", `SELEC broken FROM`)
	res, err := r.Retrieve(ctx, "How many orders did each customer place this autumn?")
	require.NoError(t, err)
	byQ := map[string][]string{}
	for _, e := range res.Examples {
		byQ[e.Question] = e.Tables
	}
	require.ElementsMatch(t, []string{"shop.orders", "shop.customers"}, byQ["How many orders did each customer place this spring?"])
	require.Equal(t, []string{"shop.orders"}, byQ["How many orders did each customer place this summer?"])
	require.Empty(t, byQ["How many orders did each customer place this winter?"])
	for _, name := range chosenNames(res) {
		require.NotContains(t, name, "secret")
	}
}

func TestSQLRelationsAndNames(t *testing.T) {
	rs, err := sqlRelations(`WITH x AS (SELECT * FROM a.t1), y AS (SELECT * FROM x JOIN t2 ON true)
		SELECT * FROM y, (SELECT 1 FROM "T3") s WHERE EXISTS (SELECT 1 FROM x) UNION SELECT * FROM y2`)
	require.NoError(t, err)
	require.ElementsMatch(t, []tableRef{{"a", "t1"}, {"", "t2"}, {"", "T3"}, {"", "y2"}}, rs)
	_, err = sqlRelations("SELEC")
	require.Error(t, err)

	for in, want := range map[string]tableRef{
		"shop.orders": {"shop", "orders"}, `"My Schema"."a.b"`: {"My Schema", "a.b"}, "orders": {"", "orders"}, "db.shop.orders": {"shop", "orders"},
	} {
		got := parseTableNames([]string{in})
		require.Equal(t, []tableRef{want}, got, in)
	}
	require.Empty(t, parseTableNames([]string{"", ".x", "a.b.c.d"}))

	require.Equal(t, "how many are there", normalizeQuestion("  How  many\tare there?!. "))
	require.True(t, containsRun([]string{"how", "many", "activ", "customer"}, []string{"activ", "customer"}))
	require.False(t, containsRun([]string{"activ", "x", "customer"}, []string{"activ", "customer"}))
}

// A table the question names and its closest example does not is spared
// the example's penalty; one both name, or neither, is not.
func TestNamedBeyondExample(t *testing.T) {
	ex := &learnedExample{stems: distinct(analyze("How many high schoolers are there?", true).stems)}
	ev := &learningEvidence{examples: []*exampleMatch{{ex: ex, sim: 0.8}}}
	q := newQuery("Return the number of likes that the high schooler named Kyle has.", nil, nil)
	spare := ev.namedBeyondExample(q)
	table := func(name string) *TableInfo { return &TableInfo{Name: name, nameA: analyze(name, false)} }
	require.True(t, spare(table("likes")))
	require.False(t, spare(table("high_schooler")), "the example names it too")
	require.False(t, spare(table("friend")), "the question does not name it")
	require.False(t, spare(table("id")), "generic words name nothing")
	require.Nil(t, (&learningEvidence{}).namedBeyondExample(q))
}

// keepPrevious pins every previous-turn table once Algorithm 1 kept one of
// them, behind what it selected, and pins nothing when it kept none.
func TestKeepPrevious(t *testing.T) {
	sc := func(id int64) *Scored { return &Scored{Candidate: &Candidate{Table: &TableInfo{ID: id}}} }
	ids := func(a *atrResult) []int64 {
		var out []int64
		for _, s := range a.Ranked[:a.Selected] {
			out = append(out, s.Table.ID)
		}
		return out
	}
	ev := &learningEvidence{previous: map[int64]bool{2: true, 4: true}}

	moved := &atrResult{Ranked: []*Scored{sc(1), sc(3), sc(2), sc(4)}, Selected: 2}
	ev.keepPrevious(moved)
	require.Equal(t, []int64{1, 3}, ids(moved))

	kept := &atrResult{Ranked: []*Scored{sc(2), sc(1), sc(3), sc(4)}, Selected: 2}
	ev.keepPrevious(kept)
	require.Equal(t, []int64{2, 1, 4}, ids(kept))
	require.Len(t, kept.Ranked, 4)

	none := &learningEvidence{}
	same := &atrResult{Ranked: []*Scored{sc(1), sc(2)}, Selected: 1}
	none.keepPrevious(same)
	require.Equal(t, []int64{1}, ids(same))
}
