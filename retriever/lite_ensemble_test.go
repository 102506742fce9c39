package retriever

import (
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// randomNet is a lite network of this build's sizes with random weights.
func randomNet(seed uint64, hidden int) *LiteModel {
	rng := rand.New(rand.NewPCG(seed, 9))
	vec := func(n int, v float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = v
			if v == 0 {
				out[i] = rng.NormFloat64()
			}
		}
		return out
	}
	m := &LiteModel{Format: liteFormat, PairFeatures: numPairFeatures, ThreshFeatures: numThreshFeatures, Hidden: hidden,
		PairMean: vec(numPairFeatures, 0), PairStd: vec(numPairFeatures, 1), ThrMean: vec(numThreshFeatures, 0), ThrStd: vec(numThreshFeatures, 1),
		B1: vec(hidden, 0), W2: vec(hidden, 0), U: vec(numPairFeatures, 0), V: vec(numThreshFeatures, 0), B2: rng.NormFloat64()}
	for range hidden {
		m.W1 = append(m.W1, vec(numPairFeatures, 0))
	}
	return m
}

func randomWindow(seed uint64, n int) (pair [][]float64, thr []float64) {
	rng := rand.New(rand.NewPCG(seed, 10))
	for range n {
		f := make([]float64, numPairFeatures)
		for k := range f {
			f[k] = rng.Float64()
		}
		pair = append(pair, f)
	}
	thr = make([]float64, numThreshFeatures)
	for k := range thr {
		thr[k] = rng.Float64()
	}
	return pair, thr
}

// An ensemble's logits are its members' mean, and its threshold the mean
// of theirs, each member's computed from its own logits.
func TestLiteEnsembleAverages(t *testing.T) {
	a, b := randomNet(1, 8), randomNet(2, 5)
	pair, thr := randomWindow(3, 7)
	la, ta := a.rawScore(pair, append([]float64(nil), thr...))
	lb, tb := b.rawScore(pair, append([]float64(nil), thr...))
	e := &LiteModel{Format: liteFormat, PairFeatures: numPairFeatures, ThreshFeatures: numThreshFeatures, Members: []*LiteModel{a, b}}
	le, te := e.rawScore(pair, append([]float64(nil), thr...))
	for i := range le {
		require.InDelta(t, (la[i]+lb[i])/2, le[i], 1e-12)
	}
	require.InDelta(t, (ta+tb)/2, te, 1e-12)

	same := &LiteModel{Format: liteFormat, PairFeatures: numPairFeatures, ThreshFeatures: numThreshFeatures, Members: []*LiteModel{a, a}}
	ls, ts := same.rawScore(pair, append([]float64(nil), thr...))
	require.InDeltaSlice(t, la, ls, 1e-12)
	require.InDelta(t, ta, ts, 1e-12)
}

func TestLiteEnsembleWeightsFile(t *testing.T) {
	a, b := randomNet(1, 8), randomNet(2, 5)
	e := &LiteModel{Format: liteFormat, PairFeatures: numPairFeatures, ThreshFeatures: numThreshFeatures,
		ThresholdBias: -0.5, RelativeCut: 1.25, Members: []*LiteModel{a, b}}
	raw, err := json.Marshal(e)
	require.NoError(t, err)
	got, err := ParseLiteModel(raw)
	require.NoError(t, err)
	require.Len(t, got.Members, 2)
	require.Equal(t, a.W1, got.Members[0].W1)
	require.Equal(t, 1.25, got.RelativeCut)
	require.Nil(t, got.Abstain)

	e.Abstain = randomNet(4, 3)
	withAbstain, err := json.Marshal(e)
	require.NoError(t, err)
	got, err = ParseLiteModel(withAbstain)
	require.NoError(t, err)
	require.NotNil(t, got.Abstain)
	require.Equal(t, e.Abstain.W1, got.Abstain.W1)
	e.Abstain = nil

	bad := func(mut func(*LiteModel)) error {
		var m LiteModel
		require.NoError(t, json.Unmarshal(raw, &m))
		mut(&m)
		b, err := json.Marshal(&m)
		require.NoError(t, err)
		_, err = ParseLiteModel(b)
		return err
	}
	for name, mut := range map[string]func(*LiteModel){
		"member with an operating point":  func(m *LiteModel) { m.Members[1].ThresholdBias = 1 },
		"nested ensemble":                 func(m *LiteModel) { m.Members[0].Members = []*LiteModel{randomNet(3, 2)} },
		"ensemble with its own network":   func(m *LiteModel) { m.Hidden, m.W1 = 1, [][]float64{make([]float64, numPairFeatures)} },
		"member of another build":         func(m *LiteModel) { m.Members[0].U = m.Members[0].U[:3] },
		"ensemble of another format":      func(m *LiteModel) { m.Format = "atrium-lite-v1" },
		"member with an abstention model": func(m *LiteModel) { m.Members[0].Abstain = randomNet(4, 3) },
		"abstention model nesting another": func(m *LiteModel) {
			m.Abstain = randomNet(4, 3)
			m.Abstain.Abstain = randomNet(5, 3)
		},
		"abstention model of another build": func(m *LiteModel) { m.Abstain = randomNet(4, 3); m.Abstain.V = m.Abstain.V[:2] },
	} {
		require.ErrorIs(t, bad(mut), ErrBadWeights, name)
	}
}
