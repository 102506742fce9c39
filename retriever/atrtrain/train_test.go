package atrtrain

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/catalog/benchload"
	"github.com/atriumdb/atrium/retriever"
	"github.com/atriumdb/atrium/test/testdb"
)

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

func TestWindowLossGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 20; trial++ {
		n := 1 + rng.IntN(8)
		logits := make([]float64, n)
		gold := make([]bool, n)
		for i := range logits {
			logits[i] = rng.NormFloat64() * 2
			gold[i] = rng.IntN(3) == 0
		}
		thr := rng.NormFloat64()
		// Every third trial is a window of an unanswerable question: no
		// gold table, L2 weighted as L1.
		noAnswer := trial%3 == 0
		if noAnswer {
			clear(gold)
		}
		_, gl, gt := windowLoss(logits, thr, gold, noAnswer)
		const h = 1e-6
		for i := range logits {
			logits[i] += h
			up, _, _ := windowLoss(logits, thr, gold, noAnswer)
			logits[i] -= 2 * h
			down, _, _ := windowLoss(logits, thr, gold, noAnswer)
			logits[i] += h
			require.InDelta(t, (up-down)/(2*h), gl[i], 1e-5)
		}
		up, _, _ := windowLoss(logits, thr+h, gold, noAnswer)
		down, _, _ := windowLoss(logits, thr-h, gold, noAnswer)
		require.InDelta(t, (up-down)/(2*h), gt, 1e-5)
	}
}

// syntheticSet builds training windows where one feature separates gold
// tables, to check that training learns and is deterministic.
func syntheticSet(seed uint64) *TrainingSet {
	rng := rand.New(rand.NewPCG(seed, 1))
	set := &TrainingSet{Questions: 50}
	for w := 0; w < 120; w++ {
		tw := TrainWindow{Thr: make([]float64, retriever.NumThreshFeatures)}
		tw.Thr[0] = 1
		for i := 0; i < 20; i++ {
			f := make([]float64, retriever.NumPairFeatures)
			for k := range f {
				f[k] = rng.Float64()
			}
			g := i < 2 && w%2 == 0
			if g {
				f[4] += 2
			}
			tw.Pair = append(tw.Pair, f)
			tw.Gold = append(tw.Gold, g)
		}
		set.Train = append(set.Train, tw)
	}
	return set
}

func TestTrainDeterministic(t *testing.T) {
	cfg := TrainConfig{Seed: 7, Epochs: 15}
	a, err := Train(context.Background(), syntheticSet(1), cfg)
	require.NoError(t, err)
	b, err := Train(context.Background(), syntheticSet(1), cfg)
	require.NoError(t, err)
	require.Equal(t, a, b)
	_, err = retriever.ParseLiteModel(mustJSON(t, a))
	require.NoError(t, err)
	// It learned the separating feature.
	requireSeparates(t, a, syntheticSet(1).Train[0])
}

// requireSeparates checks that m ranks w's first row (gold) over its
// eleventh (plain) and puts the threshold, computed as the scorer does (its
// logit slots filled from the window's logits), under the gold row. Where
// the threshold lands among the plain rows is the held-out bias's job
// (chooseBias), and the synthetic set has no held-out questions.
func requireSeparates(t *testing.T, m *retriever.LiteModel, w TrainWindow) {
	t.Helper()
	x := make([]float64, retriever.NumPairFeatures)
	h := make([]float64, m.Hidden)
	logits := make([]float64, len(w.Pair))
	for i, f := range w.Pair {
		logits[i] = m.PairLogit(f, x, h)
	}
	tf := append([]float64(nil), w.Thr...)
	retriever.SetLogitStats(tf, logits)
	thr := m.ThreshLogit(tf) + m.ThresholdBias
	require.False(t, math.IsNaN(thr))
	require.Greater(t, logits[0], thr)
	require.Greater(t, logits[0], logits[10])
}

// TestTrainEnsemble: members are trained from consecutive seeds, in
// parallel yet deterministically, and the weights file holds them all.
func TestTrainEnsemble(t *testing.T) {
	cfg := TrainConfig{Seed: 7, Epochs: 15, Members: 3}
	a, err := TrainEnsemble(context.Background(), syntheticSet(1), cfg)
	require.NoError(t, err)
	b, err := TrainEnsemble(context.Background(), syntheticSet(1), cfg)
	require.NoError(t, err)
	require.Equal(t, a, b)
	require.Len(t, a.Members, 3)
	single, err := Train(context.Background(), syntheticSet(1), TrainConfig{Seed: 8, Epochs: 15})
	require.NoError(t, err)
	require.Equal(t, single.W1, a.Members[1].W1, "member 1 is the network of seed 8")
	for i, m := range a.Members {
		require.Equal(t, uint64(7+i), m.Training.Seed)
		w := syntheticSet(1).Train[0]
		x := make([]float64, retriever.NumPairFeatures)
		h := make([]float64, m.Hidden)
		gold := m.PairLogit(w.Pair[0], x, h)
		require.Greater(t, gold, m.PairLogit(w.Pair[10], x, h), "member %d ranks the gold row first", i)
	}
	got, err := retriever.ParseLiteModel(mustJSON(t, a))
	require.NoError(t, err)
	require.Len(t, got.Members, 3)

	one, err := TrainEnsemble(context.Background(), syntheticSet(1), TrainConfig{Seed: 7, Epochs: 15, Members: 1})
	require.NoError(t, err)
	require.Empty(t, one.Members, "one member is a plain network")
}

// TestPool: the networks of several weights files become one ensemble, an
// ensemble's members and a plain network alike, without an operating
// point, and the result is a weights file this build reads.
func TestPool(t *testing.T) {
	ens, err := TrainEnsemble(context.Background(), syntheticSet(1), TrainConfig{Seed: 7, Epochs: 3, Members: 2})
	require.NoError(t, err)
	one, err := Train(context.Background(), syntheticSet(1), TrainConfig{Seed: 11, Epochs: 3})
	require.NoError(t, err)
	one.ThresholdBias, one.RelativeCut = 1.5, 0.875
	one.Expansion = &retriever.TrainedExpansion{ExpandMargin: 1}
	ens.Training.MeasuredWith = []string{"words-v1"}

	p, err := Pool(ens, one)
	require.NoError(t, err)
	require.Len(t, p.Members, 3)
	require.Equal(t, ens.Members[0].W1, p.Members[0].W1)
	require.Equal(t, ens.Members[1].W1, p.Members[1].W1)
	require.Equal(t, one.W1, p.Members[2].W1)
	require.Zero(t, p.ThresholdBias)
	require.Nil(t, p.Expansion)
	require.Contains(t, p.Training.Data, "networks of 2 weights files pooled (3 members)")
	require.Empty(t, p.Training.MeasuredWith, "a measurement of the first file's ensemble is not one of the pool")
	require.Equal(t, 1.5, one.ThresholdBias, "the inputs are not changed")
	got, err := retriever.ParseLiteModel(mustJSON(t, p))
	require.NoError(t, err)
	require.Len(t, got.Members, 3)

	single, err := Pool(one)
	require.NoError(t, err)
	require.Empty(t, single.Members, "one network pools to a plain network")
	require.Zero(t, single.ThresholdBias)
	_, err = retriever.ParseLiteModel(mustJSON(t, single))
	require.NoError(t, err)

	_, err = Pool()
	require.Error(t, err)
	judged := clone(one)
	judged.Abstain = clone(one)
	_, err = Pool(ens, judged)
	require.ErrorContains(t, err, "model 1 has an abstention model")

	// A pool of networks trained on different embedders records the mix:
	// it keeps the first file's embedder as its own.
	other := clone(one)
	other.Training.Embedder = "words-v1"
	ens.Training.Embedder = "builtin-v1"
	for _, m := range ens.Members {
		m.Training.Embedder = "builtin-v1"
	}
	mixed, err := Pool(ens, other)
	require.NoError(t, err)
	require.Equal(t, "builtin-v1", mixed.Training.Embedder)
	require.Contains(t, mixed.Training.Data, "pooled (3 members, trained with builtin-v1 (2), words-v1 (1))")
}

// TestTableCapAdmits: the zero cap admits any point, a cap alone admits
// no more tables than its target, and a band admits either side of it.
func TestTableCapAdmits(t *testing.T) {
	at := func(n float64) retriever.HeldOutStats { return retriever.HeldOutStats{AvgTables: n} }
	require.True(t, TableCap{}.admits(at(9), 0))
	c := TableCap{ATR: 2.5, Expanded: 2.6}
	require.True(t, c.admits(at(2.5), c.ATR))
	require.True(t, c.admits(at(1.2), c.ATR))
	require.False(t, c.admits(at(2.51), c.ATR))
	c.Band = 0.05
	require.True(t, c.admits(at(2.46), c.ATR))
	require.True(t, c.admits(at(2.55), c.ATR))
	require.False(t, c.admits(at(2.44), c.ATR), "a band is two-sided")
	require.False(t, c.admits(at(2.56), c.ATR))
	require.Contains(t, c.note(), "within 0.050 tables of 2.500")
	require.Empty(t, TableCap{}.note())
}

// TestPickExpansionBand: under a two-sided table bound the coverage stage
// may lift margins that sit below the band into it, rather than the band
// being met only by margins that expand and then refine away (step 37 of
// docs/retrieval.md); a one-sided cap keeps the plain best margins.
func TestPickExpansionBand(t *testing.T) {
	stats := func(tables, f1, cr float64) retriever.HeldOutStats {
		return retriever.HeldOutStats{AvgTables: tables, F1: f1, CompleteRecall: cr}
	}
	eval := func(e retriever.ExpansionConfig) retriever.HeldOutStats {
		em, rm, fm := *e.ExpandMargin, *e.RestoreMargin, *e.RefineMargin
		cover := *e.CoverMargin < 99
		switch {
		case em == 0 && rm == 0 && fm == 0 && cover && *e.CoverMargin == -0.5 && e.CoverGain == 0.15:
			return stats(2.56, .760, .935)
		case em == 0 && rm == 0 && fm == 0 && !cover:
			return stats(2.50, .770, .930)
		case em == -1 && rm == 0 && fm == 1 && !cover:
			return stats(2.60, .690, .850)
		}
		return stats(2.40, .500, .600)
	}
	ex, st := pickExpansion(eval, TableCap{ATR: 2.5, Expanded: 2.6, Band: 0.05})
	require.Equal(t, 0.0, ex.ExpandMargin)
	require.Equal(t, 0.0, ex.RefineMargin)
	require.NotNil(t, ex.CoverMargin)
	require.Equal(t, -0.5, *ex.CoverMargin)
	require.Equal(t, 0.15, ex.CoverGain)
	require.InDelta(t, 2.56, st.AvgTables, 1e-9)

	ex, st = pickExpansion(eval, TableCap{ATR: 2.5, Expanded: 2.6})
	require.Equal(t, 0.0, ex.ExpandMargin)
	require.Nil(t, ex.CoverMargin, "the cover setting scores lower")
	require.InDelta(t, 2.50, st.AvgTables, 1e-9)

	// Nothing lands in a band far away: the setting nearest its target.
	_, st = pickExpansion(eval, TableCap{ATR: 2.5, Expanded: 3.5, Band: 0.05})
	require.InDelta(t, 2.60, st.AvgTables, 1e-9)
}

// TestRecalibrateKeepsNetwork: train-atr --recalibrate keeps the given
// weights' network and re-chooses only the operating point, by the same
// rule training uses: a scorer whose threshold bias was moved away gets
// back exactly the bias and cut its own training chose.
func TestRecalibrateKeepsNetwork(t *testing.T) {
	dir := spiderTrainDir(t)
	ctx := context.Background()
	job := TrainJob{BenchDir: dir, ServerDSN: testdb.AdminDSN(), Train: TrainConfig{Epochs: 2, Limit: 120}}
	trained, err := RunTraining(ctx, job)
	require.NoError(t, err)

	moved := clone(trained)
	moved.ThresholdBias, moved.RelativeCut = trained.ThresholdBias+5, 0
	moved.Expansion = nil
	moved.Training.MeasuredWith = []string{"words-v1"}
	job.Recalibrate = moved
	got, err := RunTraining(ctx, job)
	require.NoError(t, err)
	require.Equal(t, trained.W1, got.W1)
	require.Equal(t, trained.W2, got.W2)
	require.Equal(t, trained.U, got.U)
	require.Equal(t, trained.V, got.V)
	require.Equal(t, trained.B2, got.B2)
	require.Equal(t, trained.ThresholdBias, got.ThresholdBias)
	require.Equal(t, trained.RelativeCut, got.RelativeCut)
	require.Equal(t, trained.Expansion, got.Expansion)
	require.Contains(t, got.Training.Data, "--recalibrate")
	require.Empty(t, got.Training.MeasuredWith, "a new operating point was measured with nothing")
	require.Contains(t, got.Training.Data, "--recalibrate with "+trained.Training.Embedder)

	// Weights trained on another embedder: the new operating point was
	// measured with this one, and the file says so.
	foreign := clone(moved)
	foreign.Training.Embedder = "other-v0"
	job.Recalibrate = foreign
	onThis, err := RunTraining(ctx, job)
	require.NoError(t, err)
	require.Equal(t, "other-v0", onThis.Training.Embedder, "the networks' own embedder is kept")
	require.Equal(t, []string{trained.Training.Embedder}, onThis.Training.MeasuredWith)
	require.True(t, retriever.ScorerFitsEmbedder(onThis, trained.Training.Embedder))

	// --tables-like: a reference whose threshold is raised chooses fewer
	// tables; the recalibrated point may choose no more than it, by
	// Algorithm 1 and after expansion, where unbounded it chose more.
	tight := clone(trained)
	tight.ThresholdBias = trained.ThresholdBias + 1.5
	set := job
	set.TablesLike = tight
	bounded, err := RunTraining(ctx, set)
	require.NoError(t, err)
	require.Equal(t, trained.W1, bounded.W1)
	require.Contains(t, bounded.Training.Data, "no looser than")
	refATR := bounded.Training.Data[strings.Index(bounded.Training.Data, "no looser than"):]
	var capATR, capExp float64
	_, err = fmt.Sscanf(refATR, "no looser than %f tables by Algorithm 1, %f expanded", &capATR, &capExp)
	require.NoError(t, err)
	require.LessOrEqual(t, capATR, got.Training.HeldOutATR.AvgTables, "the reference is no looser than the unbounded choice")
	t.Logf("tables: unbounded %.3f / %.3f, reference %.3f / %.3f, bounded %.3f / %.3f",
		got.Training.HeldOutATR.AvgTables, got.Training.HeldOutDefault.AvgTables, capATR, capExp,
		bounded.Training.HeldOutATR.AvgTables, bounded.Training.HeldOutDefault.AvgTables)
	require.LessOrEqual(t, bounded.Training.HeldOutATR.AvgTables, capATR+0.0005)
	require.LessOrEqual(t, bounded.Training.HeldOutDefault.AvgTables, capExp+0.0005)
}

// TestAverageEpochs: --average-epochs makes the model the element-wise mean
// of the last epochs' weights, reproducibly, and records it.
func TestAverageEpochs(t *testing.T) {
	cfg := TrainConfig{Seed: 7, Epochs: 4, AverageEpochs: 2}
	a, err := Train(context.Background(), syntheticSet(1), cfg)
	require.NoError(t, err)
	b, err := Train(context.Background(), syntheticSet(1), cfg)
	require.NoError(t, err)
	require.Equal(t, a, b)
	require.Equal(t, 2, a.Training.AveragedEpochs)
	require.Equal(t, 4, a.Training.BestEpoch)
	_, err = retriever.ParseLiteModel(mustJSON(t, a))
	require.NoError(t, err)

	// averageModels is element-wise: the mean of a model and itself is the
	// model, and shifting one of two moves the mean by half the shift.
	e3, err := Train(context.Background(), syntheticSet(1), TrainConfig{Seed: 7, Epochs: 4})
	require.NoError(t, err)
	m := averageModels([]*retriever.LiteModel{e3, e3})
	require.InDeltaSlice(t, e3.U, m.U, 1e-12)
	require.InDelta(t, e3.B2, m.B2, 1e-12)
	x := clone(e3)
	for k := range x.U {
		x.U[k] += 2
	}
	x.B2 += 4
	m = averageModels([]*retriever.LiteModel{e3, x})
	for k := range m.U {
		require.InDelta(t, e3.U[k]+1, m.U[k], 1e-12)
	}
	require.InDelta(t, e3.B2+2, m.B2, 1e-12)
}

// TestTrainZeroesConstantFeatures: a slot that never varies in training
// (comment coverage over schemas without comments) gets no weight, so a
// value it takes only at inference changes no logit; the slots that vary
// train as before.
func TestTrainZeroesConstantFeatures(t *testing.T) {
	set := syntheticSet(1)
	const slot = 9
	for _, w := range set.Train {
		for _, f := range w.Pair {
			f[slot] = 0
		}
	}
	m, err := Train(context.Background(), set, TrainConfig{Seed: 7, Epochs: 15})
	require.NoError(t, err)
	require.Equal(t, 1.0, m.PairStd[slot])
	require.Zero(t, m.U[slot])
	nonzero := 0
	for j := range m.W1 {
		require.Zero(t, m.W1[j][slot], "hidden unit %d", j)
		if m.W1[j][4] != 0 {
			nonzero++
		}
	}
	require.Equal(t, len(m.W1), nonzero)
	requireSeparates(t, m, set.Train[0])

	x := make([]float64, retriever.NumPairFeatures)
	h := make([]float64, m.Hidden)
	row := append([]float64(nil), set.Train[0].Pair[0]...)
	before := m.PairLogit(row, x, h)
	row[slot] = 1
	require.Equal(t, before, m.PairLogit(row, x, h))
}

// spiderTrainDir is the Spider benchmark the training tests load
// (testdb.SpiderDir); they are skipped in -short mode, since they load its
// 140 training schemas.
func spiderTrainDir(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("loads Spider's training schemas")
	}
	return testdb.SpiderDir(t, "train_spider.json")
}

// A query's paraphrases and rewordings are held out together or not at all,
// and the split still holds about the share asked for.
func TestSQLGroupSplit(t *testing.T) {
	var qs []benchload.Question
	for g := 0; g < 100; g++ {
		for i := 0; i < 1+g%4; i++ {
			// Case and spacing vary within a group, as Spider's do.
			q := fmt.Sprintf("SELECT  count(*) FROM t%d", g)
			if i%2 == 1 {
				q = strings.ToLower(strings.ReplaceAll(q, "  ", "\n"))
			}
			qs = append(qs, benchload.Question{DBID: []string{"Shop", "shop"}[i%2], Query: q, Question: fmt.Sprintf("q%d.%d", g, i)})
		}
	}
	used := rand.New(rand.NewPCG(1, 2)).Perm(len(qs))
	nValid := len(qs) * 15 / 100
	valid := sqlGroupSplit(qs, used, nValid, rand.New(rand.NewPCG(1, 3)))
	held, groups := 0, map[string]int{}
	for i := range qs {
		g := sqlGroup(&qs[i])
		groups[g]++
		if valid[g] {
			held++
		}
	}
	require.Len(t, groups, 100, "a group is one database and one query, whatever the case and spacing")
	require.GreaterOrEqual(t, held, nValid)
	require.Less(t, held, nValid+4, "the split stops at the first group that reaches the share")
	require.Equal(t, valid, sqlGroupSplit(qs, used, nValid, rand.New(rand.NewPCG(1, 3))), "seeded")
}
