package retriever

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/retriever/vocab"
)

// fixedScorer gives each table a fixed logit and the threshold a fixed value,
// recording the windows it saw.
type fixedScorer struct {
	logit   map[string]float64
	thr     float64
	windows [][]string
}

func (f *fixedScorer) Score(_ context.Context, _ *Query, win []*Candidate) ([]float64, float64, error) {
	out := make([]float64, len(win))
	var names []string
	for i, c := range win {
		out[i] = f.logit[c.Table.Name]
		names = append(names, c.Table.Name)
	}
	f.windows = append(f.windows, names)
	return out, f.thr, nil
}

func cands(names ...string) []*Candidate {
	out := make([]*Candidate, len(names))
	for i, n := range names {
		out[i] = &Candidate{Table: &TableInfo{ID: int64(i + 1), Schema: "s", Name: n}, Rank: i + 1}
	}
	return out
}

func selectedNames(r *atrResult) []string {
	var out []string
	for _, s := range r.Ranked[:r.Selected] {
		out = append(out, s.Table.Name)
	}
	return out
}

func TestAdaptiveRetrieveFigure7(t *testing.T) {
	// W=2, R=1 over four tables: the first window already ranks two tables
	// above the threshold, so its rank is finalised at 4 and the top three
	// of the final order are returned (Algorithm 1, lines 14-18 and 23).
	sc := &fixedScorer{logit: map[string]float64{"A": 1, "B": 5, "C": 3, "D": 0}, thr: 2}
	r, err := adaptiveRetrieve(context.Background(), sc, nil, cands("A", "B", "C", "D"), 2, 1)
	require.NoError(t, err)
	require.Equal(t, [][]string{{"C", "D"}, {"B", "C"}, {"A", "B"}}, sc.windows)
	require.Equal(t, []string{"B", "A", "C"}, selectedNames(r))
	require.Len(t, r.Ranked, 4)
}

func TestAdaptiveRetrieveThresholdInLastWindow(t *testing.T) {
	names := make([]string, 30)
	logit := map[string]float64{}
	for i := range names {
		names[i] = fmt.Sprintf("t%02d", i)
		logit[names[i]] = -float64(i) / 10
	}
	logit["t25"] = 4 // a relevant table ranked low by the hybrid stage
	logit["t03"] = 3
	sc := &fixedScorer{logit: logit, thr: 1}
	r, err := adaptiveRetrieve(context.Background(), sc, nil, cands(names...), 20, 15)
	require.NoError(t, err)
	require.Equal(t, []string{"t25", "t03"}, selectedNames(r))
	require.Len(t, sc.windows, 3) // 20, then 5+15, then 5+15
	require.Len(t, r.Ranked, 30)
}

func TestAdaptiveRetrieveSmallLists(t *testing.T) {
	for _, tc := range []struct {
		thr  float64
		want []string
	}{{10, nil}, {-10, []string{"b", "a", "c"}}, {1.5, []string{"b"}}} {
		sc := &fixedScorer{logit: map[string]float64{"a": 1, "b": 2, "c": 0}, thr: tc.thr}
		r, err := adaptiveRetrieve(context.Background(), sc, nil, cands("a", "b", "c"), 20, 15)
		require.NoError(t, err)
		require.Equal(t, tc.want, selectedNames(r), "thr %v", tc.thr)
	}
	r, err := adaptiveRetrieve(context.Background(), &fixedScorer{}, nil, nil, 20, 15)
	require.NoError(t, err)
	require.Zero(t, r.Selected)
	_, err = adaptiveRetrieve(context.Background(), &fixedScorer{}, nil, cands("a"), 5, 5)
	require.Error(t, err)
}

func TestDefaultLiteModelLoads(t *testing.T) {
	m, err := DefaultLiteModel()
	require.NoError(t, err)
	require.Equal(t, numPairFeatures, m.PairFeatures)
}

// TestScorerFitsEmbedder: the shipped weights serve the default embedder
// they were trained on, and words-v1 they were measured with, without the
// "trained with another embedder" warning; other embedders and other
// weights are judged by what their file says.
func TestScorerFitsEmbedder(t *testing.T) {
	m, err := DefaultLiteModel()
	require.NoError(t, err)
	def, err := vocab.NewDefaultEmbedder()
	require.NoError(t, err)
	require.True(t, ScorerFitsEmbedder(m, def.Name()))
	require.True(t, ScorerFitsEmbedder(m, "builtin-v1"))
	require.True(t, ScorerFitsEmbedder(m, vocab.WordsEmbedderName), "measured_with")
	require.False(t, ScorerFitsEmbedder(m, "onnx:all-MiniLM-L6-v2"))

	retrained := &LiteModel{Training: TrainInfo{Embedder: "words-v1"}}
	require.True(t, ScorerFitsEmbedder(retrained, "words-v1"))
	require.False(t, ScorerFitsEmbedder(retrained, "builtin-v1"), "measured_with is what a person vouches for, not symmetric")
	require.True(t, ScorerFitsEmbedder(&LiteModel{}, "anything"), "weights that do not say are not second-guessed")
	require.True(t, ScorerFitsEmbedder(nil, "anything"))
}

// The training code replays Algorithm 1 with shifted thresholds from one
// run's trace; the replay must equal a real run with the shifted scorer.
func TestThresholdRankReplay(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := 0; trial < 50; trial++ {
		n := 1 + rng.IntN(60)
		names := make([]string, n)
		logit := map[string]float64{}
		for i := range names {
			names[i] = fmt.Sprintf("t%02d", i)
			logit[names[i]] = rng.NormFloat64() * 2
		}
		thr := rng.NormFloat64()
		base, err := adaptiveRetrieve(context.Background(), &fixedScorer{logit: logit, thr: thr}, nil, cands(names...), 20, 15)
		require.NoError(t, err)
		for _, bias := range []float64{-2, -0.5, 0, 0.7, 3} {
			shifted, err := adaptiveRetrieve(context.Background(), &fixedScorer{logit: logit, thr: thr + bias}, nil, cands(names...), 20, 15)
			require.NoError(t, err)
			require.Equal(t, shifted.Selected, thresholdRank(base.trace, 15, bias, 0, len(base.Ranked)), "trial %d bias %v", trial, bias)
			for _, cut := range []float64{0.5, 2} {
				rel, err := adaptiveRetrieve(context.Background(), &relScorer{fixedScorer{logit: logit, thr: thr + bias}, cut}, nil, cands(names...), 20, 15)
				require.NoError(t, err)
				require.Equal(t, rel.Selected, thresholdRank(base.trace, 15, bias, cut, len(base.Ranked)), "trial %d bias %v cut %v", trial, bias, cut)
			}
		}
	}
}

// relScorer applies the lite model's relative cut to a fixed scorer.
type relScorer struct {
	fixedScorer
	cut float64
}

func (r *relScorer) Score(ctx context.Context, q *Query, win []*Candidate) ([]float64, float64, error) {
	l, thr, err := r.fixedScorer.Score(ctx, q, win)
	return l, relativeThreshold(thr, l, r.cut), err
}

func TestListIDFFeatures(t *testing.T) {
	mk := func(id int64, schema, name string, cols ...string) *Candidate {
		ti := &TableInfo{ID: id, Schema: schema, Name: name}
		for _, c := range cols {
			ti.Columns = append(ti.Columns, ColumnInfo{Name: c})
		}
		ti.prepare(nil, nil)
		return &Candidate{Table: ti, Rank: int(id)}
	}
	cs := []*Candidate{
		mk(1, "concert_singer", "singer", "singer_id", "name", "country"),
		mk(2, "concert_singer", "concert", "concert_id", "concert_name", "stadium_id"),
		mk(3, "singer", "singer", "singer_id", "name", "birth_year"),
		mk(4, "concert_singer", "stadium", "stadium_id", "location"),
	}
	q := newQuery("Which singers performed in a concert at the stadium?", nil, nil)
	schemaCoverage(q, cs)
	// concert and stadium are only in concert_singer: that schema covers
	// more, and uniquely.
	require.Equal(t, 1.0, cs[0].schemaUniqBest)
	require.Zero(t, cs[2].schemaUniqBest)
	require.Zero(t, cs[0].schemaIdfGap)
	require.Less(t, cs[2].schemaIdfGap, 0.0)
	require.Equal(t, 1.0, cs[0].schemaNamed)
	// The greedy cover starts with the rarest word (concert), then adds
	// singer and stadium: concert's stadium_id names another table and
	// covers nothing. Singer's birth_year adds no question word.
	require.Equal(t, 1.0, cs[1].coverFirst)
	require.Greater(t, cs[0].coverGain, 0.0)
	require.Greater(t, cs[3].coverGain, 0.0)
	require.Equal(t, 1.0, cs[2].coverFirst)
}

// shopScored is a scored candidate shop.name with the given columns, at
// logit (no threshold is set, so the logit is also its margin).
func shopScored(id int64, name string, logit float64, cols ...string) *Scored {
	ti := &TableInfo{ID: id, Schema: "shop", Name: name}
	for _, c := range cols {
		ti.Columns = append(ti.Columns, ColumnInfo{Name: c})
	}
	ti.prepare(nil, nil)
	return &Scored{Candidate: &Candidate{Table: ti, Rank: int(id)}, Logit: logit}
}

func TestCoverExpand(t *testing.T) {
	mk := shopScored
	ranked := []*Scored{
		mk(1, "products", 1, "product_id", "product_name", "color_code", "description"),
		mk(2, "ref_colors", -0.5, "color_code", "color_description"),
		mk(3, "suppliers", -0.4, "supplier_id", "supplier_name"),
	}
	g := &graph{adj: map[int64][]*JoinEdge{}, best: map[[2]int64]*JoinEdge{}}
	for _, e := range []*JoinEdge{
		{From: 1, To: 2, FromCols: []string{"color_code"}, ToCols: []string{"color_code"}, Source: "foreign_key", Score: 1},
		{From: 1, To: 3, FromCols: []string{"product_id"}, ToCols: []string{"supplier_id"}, Source: "foreign_key", Score: 1},
	} {
		g.adj[e.From] = append(g.adj[e.From], e)
		g.adj[e.To] = append(g.adj[e.To], e)
		g.best[[2]int64{e.From, e.To}] = e
	}
	q := newQuery(`What is the color code and description of the product named "chervil"?`, nil, g)
	noTables := func([]int64) (map[int64]*TableInfo, error) { return nil, nil }
	names := func(ex *expansion) []string {
		var out []string
		for _, s := range ex.chosen {
			out = append(out, s.Table.Name)
		}
		return out
	}
	off, zero, on := 99.0, 0.0, -1.0
	base := ExpansionConfig{ExpandMargin: &zero, RestoreMargin: &off, RefineMargin: &off}

	cfg := base
	cfg.CoverMargin = &off
	ex, err := expand(q, ranked, 1, g, cfg.withDefaults(nil), noTables)
	require.NoError(t, err)
	require.Equal(t, []string{"products"}, names(ex))

	// products carries color_code, but only ref_colors is named after a
	// color: it comes back; suppliers, though joinable and rated higher,
	// names nothing the question asks about.
	cfg = base
	cfg.CoverMargin, cfg.CoverGain = &on, 0.15
	ex, err = expand(q, ranked, 1, g, cfg.withDefaults(nil), noTables)
	require.NoError(t, err)
	require.Equal(t, []string{"products", "ref_colors"}, names(ex))
	require.Equal(t, ReasonJoin, ex.reason[2])

	// A margin below CoverMargin keeps it out.
	tight := -0.25
	cfg.CoverMargin = &tight
	ex, err = expand(q, ranked, 1, g, cfg.withDefaults(nil), noTables)
	require.NoError(t, err)
	require.Equal(t, []string{"products"}, names(ex))
}

// TestAttributeExpand: a question asking for an attribute of an entity
// ("customer names") brings the entity's table, joined to a chosen one,
// when no chosen table has that attribute, however low the scorer rated
// it; a chosen table carrying the attribute, a table no edge joins, or a
// question naming no attribute of it keep it out. So does one listing the
// entity with a chosen table's as its own ("customers with their orders").
func TestAttributeExpand(t *testing.T) {
	mk := shopScored
	orders := mk(1, "orders", 0, "id", "customer_id", "amount", "placed_at")
	customers := mk(2, "customers", -3, "id", "name", "country")
	clients := mk(3, "clients", -3, "id", "name")
	g := &graph{adj: map[int64][]*JoinEdge{}, best: map[[2]int64]*JoinEdge{}}
	e := &JoinEdge{From: 1, To: 2, FromCols: []string{"customer_id"}, ToCols: []string{"id"}, Source: "foreign_key", Score: 1}
	g.adj[1] = append(g.adj[1], e)
	g.adj[2] = append(g.adj[2], e)
	g.best[[2]int64{1, 2}] = e
	noTables := func([]int64) (map[int64]*TableInfo, error) { return nil, nil }
	off, zero := 99.0, 0.0
	base := ExpansionConfig{ExpandMargin: &zero, RestoreMargin: &off, RefineMargin: &off, CoverMargin: &off}
	chosen := func(question string, cfg ExpansionConfig, ranked ...*Scored) []string {
		t.Helper()
		ex, err := expand(newQuery(question, nil, g), ranked, 1, g, cfg.withDefaults(nil), noTables)
		require.NoError(t, err)
		var out []string
		for _, s := range ex.chosen {
			out = append(out, s.Table.Name)
		}
		return out
	}
	for _, q := range []string{
		"customer names and their orders",
		"total order amount per customer name",
		"What is the name of each customer who ordered in 2024?",
		"the names of all the customers with orders",
		"Show the customer's country and order amounts",
	} {
		require.Equal(t, []string{"orders", "customers"}, chosen(q, base, orders, customers, clients), q)
	}
	for _, q := range []string{
		"how many orders per customer",   // no attribute asked
		"customer ids and order amounts", // orders has the ids
		"order names",                    // names of orders: not the customers'
	} {
		require.Equal(t, []string{"orders"}, chosen(q, base, orders, customers, clients), q)
	}
	// clients has names too, but no edge joins it to orders.
	require.Equal(t, []string{"orders"}, chosen("client names and their orders", base, orders, clients, customers))
	// A chosen table with the attribute already answers it.
	named := mk(1, "orders", 0, "id", "customer_id", "customer_name")
	require.Equal(t, []string{"orders"}, chosen("customer names and their orders", base, named, customers))
	cfg := base
	cfg.NoAttributes = true
	require.Equal(t, []string{"orders"}, chosen("customer names and their orders", cfg, orders, customers))

	// Owner completion: the two entities listed together, one as the
	// other's, either way round.
	for _, q := range []string{
		"list customers with their orders",
		"customers whose orders were placed in 2024",
		"all orders and their customers",
		"customers along with their orders",
	} {
		require.Equal(t, []string{"orders", "customers"}, chosen(q, base, orders, customers, clients), q)
		require.Equal(t, []string{"orders"}, chosen(q, cfg, orders, customers, clients), q)
	}
	for _, q := range []string{
		"how many orders per customer",
		"orders with their amounts", // no table is named by amounts
		"clients with their orders", // no edge joins clients
	} {
		require.Equal(t, []string{"orders"}, chosen(q, base, orders, customers, clients), q)
	}

	// A terse, documented schema: the entity is read from the table's own
	// comment, the attribute from a column's description.
	doc := func(id int64, name, comment string, cols ...ColumnInfo) *Scored {
		ti := &TableInfo{ID: id, Schema: "crm", Name: name, Comment: comment, Columns: cols}
		ti.prepare(nil, nil)
		return &Scored{Candidate: &Candidate{Table: ti, Rank: int(id)}, Logit: -3}
	}
	ordr := doc(1, "orders", "orders placed by customers", ColumnInfo{Name: "id"}, ColumnInfo{Name: "cstmr_id"}, ColumnInfo{Name: "amt"})
	ordr.Logit = 0
	cstmr := doc(2, "cstmr", "customers of the shop", ColumnInfo{Name: "id"}, ColumnInfo{Name: "nm", Description: "full name"})
	require.Equal(t, []string{"orders", "cstmr"}, chosen("customer names and their orders", base, ordr, cstmr))
	require.Equal(t, []string{"orders", "cstmr"}, chosen("list customers with their orders", base, ordr, cstmr))
}

// TestDocumentedTerseSchema: comments and descriptions count as the words a
// table names, for the scorer's coverage features and for coverage
// expansion; a table's own comment counts as its name does (step 13 of
// docs/retrieval.md).
func TestDocumentedTerseSchema(t *testing.T) {
	cst := &TableInfo{ID: 1, Schema: "crm", Name: "cstmr", Comment: "Customers of the online shop",
		Columns: []ColumnInfo{{Name: "cstmr_id"}, {Name: "cntry", Description: "country of residence"}}}
	cst.prepare(nil, nil)
	bare := &TableInfo{ID: 2, Schema: "crm", Name: "cstmr", Columns: []ColumnInfo{{Name: "cstmr_id"}, {Name: "cntry"}}}
	bare.prepare(nil, nil)
	q := newQuery("How many customers live in each country?", nil, nil)
	st, plain := statsFor(q, cst), statsFor(q, bare)
	require.Zero(t, plain.qColCov)
	require.Greater(t, st.qColCov, 0.0)
	require.True(t, st.covered[stem("customers")], "covered: %v", st.covered)
	own := ownStems(cst)
	for _, w := range []string{"country", "online"} {
		require.True(t, own[stem(w)], "%s in %v", w, own)
	}
	title := cst.titleStems()
	require.True(t, title[stem("customers")])
	require.False(t, title[stem("country")], "a column's description is not the table's name")

	// Coverage expansion: products carries color_code, yet the reference
	// table documented as a list of colors is what the question's "color"
	// names, though its own name (rc) says nothing.
	mk := func(ti *TableInfo, margin float64) *Scored {
		ti.prepare(nil, nil)
		return &Scored{Candidate: &Candidate{Table: ti, Rank: int(ti.ID)}, Logit: margin}
	}
	ranked := []*Scored{
		mk(&TableInfo{ID: 1, Schema: "shop", Name: "products", Columns: []ColumnInfo{{Name: "product_id"}, {Name: "product_name"}, {Name: "color_code"}, {Name: "description"}}}, 1),
		mk(&TableInfo{ID: 2, Schema: "shop", Name: "rc", Comment: "Reference list of colors", Columns: []ColumnInfo{{Name: "cd"}, {Name: "dscr"}}}, -0.5),
	}
	g := &graph{adj: map[int64][]*JoinEdge{}, best: map[[2]int64]*JoinEdge{}}
	e := &JoinEdge{From: 1, To: 2, FromCols: []string{"color_code"}, ToCols: []string{"cd"}, Source: "foreign_key", Score: 1}
	g.adj[1], g.adj[2] = []*JoinEdge{e}, []*JoinEdge{e}
	g.best[[2]int64{1, 2}] = e
	q = newQuery(`What is the color code and description of the product named "chervil"?`, nil, g)
	off, zero, on := 99.0, 0.0, -1.0
	cfg := ExpansionConfig{ExpandMargin: &zero, RestoreMargin: &off, RefineMargin: &off, CoverMargin: &on, CoverGain: 0.15}
	ex, err := expand(q, ranked, 1, g, cfg.withDefaults(nil), func([]int64) (map[int64]*TableInfo, error) { return nil, nil })
	require.NoError(t, err)
	require.Len(t, ex.chosen, 2)
	require.Equal(t, "rc", ex.chosen[1].Table.Name)
	ranked[1].Table.Comment = ""
	ranked[1].Table.prepare(nil, nil)
	ex, err = expand(q, ranked, 1, g, cfg.withDefaults(nil), func([]int64) (map[int64]*TableInfo, error) { return nil, nil })
	require.NoError(t, err)
	require.Len(t, ex.chosen, 1, "undocumented, rc names nothing the question asks about")
}

// TestSpanningPathsPrefer: the spanning forest joins two preferred
// (glossary-pinned) tables directly rather than through a third chosen
// table, even by a key scored a little lower.
func TestSpanningPathsPrefer(t *testing.T) {
	info := map[int64]*TableInfo{
		1: {ID: 1, Schema: "shop", Name: "customers"},
		2: {ID: 2, Schema: "shop", Name: "addresses"},
		3: {ID: 3, Schema: "shop", Name: "orders"},
	}
	g := testGraph(
		&JoinEdge{From: 2, To: 1, FromCols: []string{"customer_id"}, ToCols: []string{"customer_id"}, Source: "foreign_key", Score: 1},
		&JoinEdge{From: 3, To: 2, FromCols: []string{"shipping_address_id"}, ToCols: []string{"address_id"}, Source: "foreign_key", Score: 1},
		&JoinEdge{From: 3, To: 1, FromCols: []string{"customer_id"}, ToCols: []string{"customer_id"}, Source: "inferred", Score: 0.95},
	)
	in := map[int64]bool{1: true, 2: true, 3: true}
	direct := func(paths []JoinPath) bool {
		for _, p := range paths {
			if p.From.Name == "orders" && p.To.Name == "customers" {
				return true
			}
		}
		return false
	}
	plain := spanningPaths(g, in, info, 0, nil)
	require.Len(t, plain, 2)
	require.False(t, direct(plain), "by score: %v", plain)
	pref := spanningPaths(g, in, info, 0, map[int64]bool{1: true, 3: true})
	require.Len(t, pref, 2)
	require.True(t, direct(pref), "%v", pref)
}

// TestJoinPathsShowEveryKey: the prompt shows every key among the chosen
// tables, the spanning forest's first, each once: a second key between the
// same two tables (departments.manager_id beside employees.department_id)
// and a direct key the forest did not need.
func TestJoinPathsShowEveryKey(t *testing.T) {
	info := map[int64]*TableInfo{
		1: {ID: 1, Schema: "hr", Name: "employees"},
		2: {ID: 2, Schema: "hr", Name: "departments"},
		3: {ID: 3, Schema: "hr", Name: "salaries"},
		4: {ID: 4, Schema: "hr", Name: "jobs"},
	}
	g := testGraph(
		&JoinEdge{From: 2, To: 1, FromCols: []string{"manager_id"}, ToCols: []string{"employee_id"}, Source: "foreign_key", Score: 1},
		&JoinEdge{From: 1, To: 2, FromCols: []string{"department_id"}, ToCols: []string{"department_id"}, Source: "foreign_key", Score: 1},
		&JoinEdge{From: 3, To: 1, FromCols: []string{"employee_id"}, ToCols: []string{"employee_id"}, Source: "foreign_key", Score: 1},
		&JoinEdge{From: 3, To: 2, FromCols: []string{"department_id"}, ToCols: []string{"department_id"}, Source: "inferred", Score: 0.7},
		&JoinEdge{From: 1, To: 4, FromCols: []string{"job_id"}, ToCols: []string{"job_id"}, Source: "inferred", Score: 0.3},
	)
	in := map[int64]bool{1: true, 2: true, 3: true, 4: true}
	var got []string
	for _, p := range joinPaths(g, in, info, 0.5, nil) {
		got = append(got, p.String())
	}
	forest := spanningPaths(g, in, info, 0.5, nil)
	require.Len(t, forest, 2)
	require.Len(t, got, 4, "%v", got)
	for i, p := range forest {
		require.Equal(t, p.String(), got[i], "the forest first")
	}
	require.Contains(t, got, "hr.employees.department_id = hr.departments.department_id")
	require.Contains(t, got, "hr.departments.manager_id = hr.employees.employee_id")
	require.Contains(t, got, "hr.salaries.department_id = hr.departments.department_id")
	require.NotContains(t, strings.Join(got, "; "), "jobs", "below the edge score floor")
}

// testGraph builds a join graph of edges; between two tables the first of
// the highest-scoring edges is the best.
func testGraph(edges ...*JoinEdge) *graph {
	g := &graph{adj: map[int64][]*JoinEdge{}, best: map[[2]int64]*JoinEdge{}}
	for _, e := range edges {
		g.adj[e.From] = append(g.adj[e.From], e)
		g.adj[e.To] = append(g.adj[e.To], e)
		k := [2]int64{min(e.From, e.To), max(e.From, e.To)}
		if old := g.best[k]; old == nil || e.Score > old.Score {
			g.best[k] = e
		}
	}
	return g
}
