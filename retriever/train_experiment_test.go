package retriever

import (
	"context"
	"encoding/gob"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/catalog"
	"github.com/atriumdb/atrium/catalog/benchload"
	"github.com/atriumdb/atrium/migrations"
	"github.com/atriumdb/atrium/test/testdb"
)

// TestTrainExperiment is a development harness, not a regular test: with
// ATRIUM_TRAIN_EXPERIMENT=<cache file> it collects the training candidate
// lists once (cached in the file), then rebuilds the features, trains and
// prints held-out diagnostics, so feature and training changes can be
// measured without re-running the hybrid stage for 7,000 questions.
// ATRIUM_TRAIN_BENCH names the Spider directory. ATRIUM_TRAIN_MODEL=<weights>
// skips training and diagnoses those weights (and prints the expansion
// constants Train would choose for them; ATRIUM_TRAIN_REWRITE=<file> writes
// the weights with those constants). ATRIUM_TRAIN_SHOW prints incomplete
// held-out results, ATRIUM_TRAIN_JOINT the threshold × expansion curve.
func TestTrainExperiment(t *testing.T) {
	cache := os.Getenv("ATRIUM_TRAIN_EXPERIMENT")
	if cache == "" {
		t.Skip("set ATRIUM_TRAIN_EXPERIMENT=<cache file> to run the training harness")
	}
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	cfg := TrainConfig{Logger: log}
	if v := os.Getenv("ATRIUM_TRAIN_EPOCHS"); v != "" {
		fmt.Sscan(v, &cfg.Epochs)
	}
	if v := os.Getenv("ATRIUM_TRAIN_HIDDEN"); v != "" {
		fmt.Sscan(v, &cfg.Hidden)
	}
	if v := os.Getenv("ATRIUM_TRAIN_BATCH"); v != "" {
		fmt.Sscan(v, &cfg.Batch)
	}
	if v := os.Getenv("ATRIUM_TRAIN_LR"); v != "" {
		fmt.Sscan(v, &cfg.LR)
	}
	cfg = cfg.withDefaults()
	set, err := loadExperimentSet(cache, cfg)
	if os.IsNotExist(err) {
		set = collectExperimentSet(t, ctx, cfg)
		require.NoError(t, saveExperimentSet(cache, set))
	} else {
		require.NoError(t, err)
	}
	set.buildWindows(cfg)
	if os.Getenv("ATRIUM_TRAIN_MODEL") == "" {
		expansionGrid = []float64{-1, 0, 99}
	}
	var m *LiteModel
	if mp := os.Getenv("ATRIUM_TRAIN_MODEL"); mp != "" {
		b, err := os.ReadFile(mp)
		require.NoError(t, err)
		m, err = ParseLiteModel(b)
		require.NoError(t, err)
	} else {
		m, err = Train(ctx, set, cfg)
		require.NoError(t, err)
	}
	runs := runHeldOut(ctx, m, set.valid, cfg.Window, cfg.Retain)
	diagnose(t, runs)
	missBreakdown(t, m, runs)
	tradeoff(t, m, set.valid, cfg)
	if os.Getenv("ATRIUM_TRAIN_JOINT") != "" {
		jointCurve(t, m, set.valid, cfg)
	}
	if os.Getenv("ATRIUM_TRAIN_MODEL") != "" {
		e, st := chooseExpansion(ctx, m, set.valid, cfg)
		b, _ := json.Marshal(e)
		sb, _ := json.Marshal(st)
		t.Logf("chooseExpansion: %s %s", b, sb)
		if out := os.Getenv("ATRIUM_TRAIN_REWRITE"); out != "" {
			// Re-choose the expansion constants of a trained model (what
			// Train does after its last epoch) without retraining it.
			m.Expansion, m.Training.HeldOutDefault, m.Training.ValidF1 = e, &st, st.F1
			b, err := json.MarshalIndent(m, "", " ")
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(out, append(b, '\n'), 0o644))
		}
	}
	if os.Getenv("ATRIUM_TRAIN_DUMP") != "" {
		dumpFailures(t, runs, 40)
	}
	if out := os.Getenv("ATRIUM_TRAIN_OUT"); out != "" {
		b, err := json.MarshalIndent(m, "", " ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(out, b, 0o644))
	}
}

func diagnose(t *testing.T, runs []heldOutRun) {
	// Oracle count: the ranking's top |gold| tables.
	var oracle heldOutAcc
	top1 := 0.0
	schemaOK := 0.0
	byGold := map[int]*heldOutAcc{}
	for _, r := range runs {
		k := len(r.tq.gold)
		var got []string
		for i, s := range r.res.Ranked {
			if i == k {
				break
			}
			got = append(got, strings.ToLower(s.Table.QualifiedName()))
		}
		oracle.add(got, r.tq.gold)
		if len(r.res.Ranked) > 0 && r.tq.gold[strings.ToLower(r.res.Ranked[0].Table.QualifiedName())] {
			top1++
		}
		if len(r.res.Ranked) > 0 {
			for g := range r.tq.gold {
				if strings.HasPrefix(g, strings.ToLower(r.res.Ranked[0].Table.Schema)+".") {
					schemaOK++
					break
				}
			}
		}
		a := byGold[min(k, 4)]
		if a == nil {
			a = &heldOutAcc{}
			byGold[min(k, 4)] = a
		}
		var sel []string
		for _, s := range r.res.Ranked[:r.res.Selected] {
			sel = append(sel, strings.ToLower(s.Table.QualifiedName()))
		}
		a.add(sel, r.tq.gold)
	}
	var h3 heldOutAcc
	for _, r := range runs {
		var got []string
		for _, c := range r.tq.cands[:min(3, len(r.tq.cands))] {
			got = append(got, strings.ToLower(c.Table.QualifiedName()))
		}
		h3.add(got, r.tq.gold)
	}
	t.Logf("hybrid@3: F1 %.3f CR %.3f", h3.stats().F1, h3.stats().CompleteRecall)
	n := float64(len(runs))
	st := oracle.stats()
	t.Logf("oracle-k: F1 %.3f CR %.3f; top1 gold %.3f; top1 schema right %.3f", st.F1, st.CompleteRecall, top1/n, schemaOK/n)
	ks := make([]int, 0, len(byGold))
	for k := range byGold {
		ks = append(ks, k)
	}
	sort.Ints(ks)
	for _, k := range ks {
		s := byGold[k].stats()
		t.Logf("gold=%d (n=%d): returned %.2f P %.3f R %.3f CR %.3f F1 %.3f", k, byGold[k].n, s.AvgTables, s.Precision, s.Recall, s.CompleteRecall, s.F1)
	}
}

func collectExperimentSet(t *testing.T, ctx context.Context, cfg TrainConfig) *TrainingSet {
	dir := os.Getenv("ATRIUM_TRAIN_BENCH")
	if dir == "" {
		dir = "/work/shared/bench/spider"
	}
	bench, err := LoadBench(dir, "train_spider.json")
	require.NoError(t, err)
	dsn := testdb.New(t, "vector", "pg_trgm")
	pool, err := OpenPool(ctx, dsn, 100, map[string]string{"enable_indexscan": "off"})
	require.NoError(t, err)
	defer pool.Close()
	_, err = migrations.Up(ctx, pool, migrations.Options{})
	require.NoError(t, err)
	var ids []string
	seen := map[string]bool{}
	for _, q := range bench.Questions {
		if !seen[q.DBID] {
			seen[q.DBID] = true
			ids = append(ids, q.DBID)
		}
	}
	_, err = benchload.Load(ctx, pool, dir, benchload.Options{DBIDs: ids})
	require.NoError(t, err)
	emb := catalog.NewBuiltinEmbedder(0)
	_, err = catalog.Sync(ctx, pool, catalog.SyncOptions{Embedder: emb})
	require.NoError(t, err)
	r, err := newForTraining(pool, emb)
	require.NoError(t, err)
	set, err := BuildTrainingSet(ctx, r, bench, cfg)
	require.NoError(t, err)
	return set
}

type expCand struct {
	Table                      int64
	Rank                       int
	LexRaw, SemRaw, SLex, SSem float64
	S                          float64
	Values                     []ValueHit
}

type expQuestion struct {
	Text      string
	Gold      []string
	Valid     bool
	High, Low []expCand
}

type expSet struct {
	Tables    map[int64]TableInfo
	Edges     []JoinEdge
	Questions []expQuestion
	Embedder  string
	N, H1     int
}

func saveExperimentSet(path string, set *TrainingSet) error {
	es := expSet{Tables: map[int64]TableInfo{}, Embedder: set.Embedder, N: set.Questions, H1: set.h1Complete}
	var g *graph
	conv := func(cs []*Candidate) []expCand {
		out := make([]expCand, len(cs))
		for i, c := range cs {
			es.Tables[c.Table.ID] = TableInfo{ID: c.Table.ID, Schema: c.Table.Schema, Name: c.Table.Name, Kind: c.Table.Kind,
				Comment: c.Table.Comment, Purpose: c.Table.Purpose, EstRows: c.Table.EstRows, Columns: c.Table.Columns}
			out[i] = expCand{c.Table.ID, c.Rank, c.LexRaw, c.SemRaw, c.SLex, c.SSem, c.S, c.Values}
		}
		return out
	}
	for _, tq := range set.questions {
		g = tq.g
		es.Questions = append(es.Questions, expQuestion{Text: tq.q.Text, Gold: keys(tq.gold), Valid: tq.valid, High: conv(tq.cands), Low: conv(tq.low)})
	}
	if g != nil {
		for _, es2 := range g.adj {
			for _, e := range es2 {
				es.Edges = append(es.Edges, *e)
			}
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return gob.NewEncoder(f).Encode(&es)
}

func loadExperimentSet(path string, cfg TrainConfig) (*TrainingSet, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var es expSet
	if err := gob.NewDecoder(f).Decode(&es); err != nil {
		return nil, fmt.Errorf("decode %s: %w", path, err)
	}
	tables := map[int64]*TableInfo{}
	for id, ti := range es.Tables {
		ti := ti
		ti.prepare()
		tables[id] = &ti
	}
	g := &graph{adj: map[int64][]*JoinEdge{}, best: map[[2]int64]*JoinEdge{}}
	dedup := map[string]bool{}
	for i := range es.Edges {
		e := &es.Edges[i]
		k := fmt.Sprint(e.From, e.FromCols, e.To, e.ToCols, e.Source)
		if dedup[k] {
			continue
		}
		dedup[k] = true
		g.adj[e.From] = append(g.adj[e.From], e)
		g.adj[e.To] = append(g.adj[e.To], e)
		a, b := e.From, e.To
		if a > b {
			a, b = b, a
		}
		if old := g.best[[2]int64{a, b}]; old == nil || e.Score > old.Score || (e.Score == old.Score && e.Source == "foreign_key" && old.Source != "foreign_key") {
			g.best[[2]int64{a, b}] = e
		}
	}
	for id, es := range g.adj {
		sort.SliceStable(es, func(i, j int) bool {
			if other(es[i], id) != other(es[j], id) {
				return other(es[i], id) < other(es[j], id)
			}
			return fmt.Sprint(es[i].FromCols) < fmt.Sprint(es[j].FromCols)
		})
	}
	set := &TrainingSet{Questions: es.N, h1Complete: es.H1, Embedder: es.Embedder}
	for _, eq := range es.Questions {
		q := newQuery(eq.Text, nil, g)
		conv := func(ecs []expCand) []*Candidate {
			out := make([]*Candidate, len(ecs))
			for i, ec := range ecs {
				c := &Candidate{Table: tables[ec.Table], Rank: ec.Rank, LexRaw: ec.LexRaw, SemRaw: ec.SemRaw, SLex: ec.SLex, SSem: ec.SSem, S: ec.S, Values: ec.Values}
				scoreValues(q, c)
				out[i] = c
			}
			schemaCoverage(q, out)
			return out
		}
		gold := map[string]bool{}
		for _, g := range eq.Gold {
			gold[g] = true
		}
		set.questions = append(set.questions, &trainQuestion{q: q, cands: conv(eq.High), low: conv(eq.Low), gold: gold, g: g, valid: eq.Valid})
	}
	return set, nil
}

func dumpFailures(t *testing.T, runs []heldOutRun, n int) {
	shown := 0
	for _, r := range runs {
		if shown >= n {
			break
		}
		if len(r.res.Ranked) == 0 {
			continue
		}
		top := strings.ToLower(r.res.Ranked[0].Table.Schema) + "."
		ok := false
		for g := range r.tq.gold {
			if strings.HasPrefix(g, top) {
				ok = true
			}
		}
		if ok {
			continue
		}
		shown++
		var b strings.Builder
		fmt.Fprintf(&b, "Q: %s\n   gold %v\n", r.tq.q.Text, keys(r.tq.gold))
		for i, s := range r.res.Ranked[:min(6, len(r.res.Ranked))] {
			fmt.Fprintf(&b, "   %d %s logit %.2f S %.2f lex %.2f sem %.2f hyb#%d cov %.2f vals %v\n", i+1, s.Table.QualifiedName(), s.Logit, s.S, s.SLex, s.SSem, s.Rank, s.schemaCov, s.Values)
		}
		for i, s := range r.res.Ranked {
			if r.tq.gold[strings.ToLower(s.Table.QualifiedName())] {
				fmt.Fprintf(&b, "   gold at %d: %s logit %.2f S %.2f hyb#%d cov %.2f\n", i+1, s.Table.QualifiedName(), s.Logit, s.S, s.Rank, s.schemaCov)
				break
			}
		}
		t.Log(b.String())
	}
}

// missBreakdown classifies the held-out questions whose default-pipeline
// result misses a gold table.
func missBreakdown(t *testing.T, m *LiteModel, runs []heldOutRun) {
	e := ExpansionConfig{}.withDefaults(m)
	cnt := map[string]int{}
	marg := map[string]int{}
	for _, r := range runs {
		ex, _ := expand(r.tq.q, r.res.Ranked, r.res.Selected, r.tq.g, e, func([]int64) (map[int64]*TableInfo, error) { return nil, nil })
		got := map[string]bool{}
		for _, s := range ex.chosen {
			got[strings.ToLower(s.Table.QualifiedName())] = true
		}
		missing := []string{}
		for g := range r.tq.gold {
			if !got[g] {
				missing = append(missing, g)
			}
		}
		if len(missing) == 0 {
			continue
		}
		cnt[fmt.Sprintf("gold=%d", min(len(r.tq.gold), 3))]++
		topSchema := ""
		if len(ex.chosen) > 0 {
			topSchema = strings.ToLower(ex.chosen[0].Table.Schema) + "."
		}
		if os.Getenv("ATRIUM_TRAIN_SHOW") != "" && cnt["shown"] < 25 {
			cnt["shown"]++
			var b strings.Builder
			fmt.Fprintf(&b, "Q: %s\n  gold %v missing %v\n  chosen:", r.tq.q.Text, keys(r.tq.gold), missing)
			for _, s := range ex.chosen {
				fmt.Fprintf(&b, " %s(%.2f)", s.Table.QualifiedName(), s.Margin())
			}
			for _, s := range r.res.Ranked {
				if r.tq.gold[strings.ToLower(s.Table.QualifiedName())] && !got[strings.ToLower(s.Table.QualifiedName())] {
					fmt.Fprintf(&b, "\n  missed %s margin %.2f hyb#%d cols %v", s.Table.QualifiedName(), s.Margin(), s.Rank, len(s.Table.Columns))
				}
			}
			t.Log(b.String())
		}
		for _, g := range missing {
			var at *Scored
			pos := -1
			for i, s := range r.res.Ranked {
				if strings.ToLower(s.Table.QualifiedName()) == g {
					at, pos = s, i
				}
			}
			if at == nil {
				cnt["miss: not in candidates"]++
				continue
			}
			if !strings.HasPrefix(g, topSchema) {
				cnt["miss: top table in other schema"]++
			} else {
				cnt["miss: same schema as top"]++
			}
			joins := false
			for _, c := range ex.chosen {
				if ed := r.tq.g.edge(at.Table.ID, c.Table.ID); ed != nil && ed.Score >= 0.5 {
					joins = true
				}
			}
			if joins {
				cnt["miss: joins a chosen table"]++
			}
			mg := at.Margin()
			switch {
			case mg >= -0.5:
				marg["margin [-0.5,)"]++
			case mg >= -1:
				marg["margin [-1,-0.5)"]++
			case mg >= -2:
				marg["margin [-2,-1)"]++
			case mg >= -4:
				marg["margin [-4,-2)"]++
			default:
				marg["margin < -4"]++
			}
			switch {
			case pos < 3:
				marg["rank 1-3"]++
			case pos < 5:
				marg["rank 4-5"]++
			case pos < 10:
				marg["rank 6-10"]++
			default:
				marg["rank >10"]++
			}
		}
	}
	t.Logf("incomplete questions (n=%d): %v", len(runs), cnt)
	t.Logf("missing gold tables: %v", marg)
}

// tradeoff prints the best held-out F1 of Algorithm 1 (bias, cut) and of
// ATR + expansion under complete-recall floors.
func tradeoff(t *testing.T, m *LiteModel, qs []*trainQuestion, cfg TrainConfig) {
	base := *m
	base.ThresholdBias, base.RelativeCut = 0, 0
	runs := runHeldOut(context.Background(), &base, qs, cfg.Window, cfg.Retain)
	type pt struct {
		b, c float64
		st   HeldOutStats
	}
	var pts []pt
	for _, c := range cutGrid {
		for _, b := range biasGrid {
			pts = append(pts, pt{b, c, atrStats(runs, cfg.Retain, b, c)})
		}
	}
	for _, floor := range []float64{0.88, 0.90, 0.92, 0.94, 0.95, 0.96, 0.97, 0.98} {
		var best *pt
		for i := range pts {
			if pts[i].st.CompleteRecall >= floor && (best == nil || pts[i].st.F1 > best.st.F1) {
				best = &pts[i]
			}
		}
		if best != nil {
			t.Logf("ATR CR>=%.2f: bias %.2f cut %.2f P %.3f R %.3f CR %.3f F1 %.3f tables %.2f", floor, best.b, best.c, best.st.Precision, best.st.Recall, best.st.CompleteRecall, best.st.F1, best.st.AvgTables)
		}
	}
}

// jointCurve prints held-out ATR + expansion (the model's expansion
// constants) for threshold biases and relative cuts around the chosen ones.
func jointCurve(t *testing.T, m *LiteModel, qs []*trainQuestion, cfg TrainConfig) {
	e := ExpansionConfig{}.withDefaults(m)
	for _, c := range []float64{0.75, 1, 1.25, 1.5, 2} {
		for _, b := range []float64{-1, -0.5, 0, 0.75, 1.5} {
			mm := *m
			mm.ThresholdBias, mm.RelativeCut = b, c
			st := expansionStats(runHeldOut(context.Background(), &mm, qs, cfg.Window, cfg.Retain), e)
			t.Logf("JOINT cut %.2f bias %.2f: P %.3f R %.3f CR %.3f F1 %.3f tables %.2f obj %.4f", c, b, st.Precision, st.Recall, st.CompleteRecall, st.F1, st.AvgTables, st.objective())
		}
	}
}
