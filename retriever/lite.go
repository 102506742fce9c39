package retriever

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
)

// Scorer rates one window of candidate tables for a question: one logit per
// table and one logit for ATR's threshold token. Tables whose logit exceeds
// the threshold are relevant. Implementations must be safe for concurrent
// use.
type Scorer interface {
	Score(ctx context.Context, q *Query, window []*Candidate) (logits []float64, threshold float64, err error)
}

//go:embed lite_weights.json
var liteWeightsJSON []byte

// LiteModel is the built-in scorer: a one-hidden-layer network over the
// features of each (question, table) pair in a window, and a linear
// threshold over features of the question and the window. Trained by
// Train (atrium train-atr) with ATR's losses; immutable once loaded, so safe
// for concurrent use.
type LiteModel struct {
	Format         string      `json:"format"`
	PairFeatures   int         `json:"pair_features"`
	ThreshFeatures int         `json:"thresh_features"`
	Hidden         int         `json:"hidden"`
	PairMean       []float64   `json:"pair_mean"`
	PairStd        []float64   `json:"pair_std"`
	ThrMean        []float64   `json:"thr_mean"`
	ThrStd         []float64   `json:"thr_std"`
	W1             [][]float64 `json:"w1"`
	B1             []float64   `json:"b1"`
	W2             []float64   `json:"w2"`
	B2             float64     `json:"b2"`
	// U is a linear path from the standardised features straight to the
	// logit, beside the hidden layer: when the tanh units saturate on
	// strong candidates, U still orders them.
	U []float64 `json:"u"`
	V []float64 `json:"v"`
	// ThresholdBias is added to the threshold logit at inference. ATR's
	// loss weights (α=0.8 on L1 against β=0.03 on L2) put the threshold
	// low; the bias re-centres the decision, chosen on the held-out
	// training questions (see train.go).
	ThresholdBias float64 `json:"threshold_bias"`
	// RelativeCut, when positive, raises the threshold to the window's best
	// table logit minus RelativeCut (see relativeThreshold); chosen with
	// ThresholdBias.
	RelativeCut float64 `json:"relative_cut"`
	// Expansion holds the expansion margins chosen on the training
	// validation split.
	Expansion *TrainedExpansion `json:"expansion,omitempty"`
	Training  TrainInfo         `json:"training"`
	// Members, when present, make the model an ensemble: networks trained
	// alike from different seeds, whose window logits and threshold logits
	// are averaged before ThresholdBias and RelativeCut apply. Retrainings
	// differ by several points of F1 on unseen databases by seed alone
	// (docs/retrieval.md, step 10); their mean is steadier and better than
	// a typical member. An ensemble has no network of its own (Hidden 0);
	// members carry no operating point (bias and cut 0, no expansion).
	Members []*LiteModel `json:"members,omitempty"`
	// Abstain, when present, decides abstention instead: its own run of
	// Algorithm 1 over the same candidates (its networks, bias and cut)
	// gives the best logit and the coverage the floors compare, and a
	// question it does not abstain on gets this model's selection. A
	// ranking that is better at ordering tables also finds better-matching
	// tables for a question no table answers, and loses abstention at the
	// same false abstention (docs/retrieval.md, steps 42-44: a prior on the
	// candidates' hybrid score, with the shipped networks deciding
	// abstention). The abstention floors are logits of this model. The
	// shipped weights have none.
	Abstain *LiteModel `json:"abstain,omitempty"`
}

// TrainedExpansion are expansion defaults learned with the weights.
type TrainedExpansion struct {
	ExpandMargin  float64 `json:"expand_margin"`
	RestoreMargin float64 `json:"restore_margin"`
	RefineMargin  float64 `json:"refine_margin"`
	// CoverMargin and CoverGain: see ExpansionConfig (absent: coverage
	// expansion off).
	CoverMargin *float64 `json:"cover_margin,omitempty"`
	CoverGain   float64  `json:"cover_gain,omitempty"`
}

// TrainInfo records how a LiteModel was trained, so a reader can reproduce it.
type TrainInfo struct {
	Data      string `json:"data"`
	Seed      uint64 `json:"seed"`
	Epochs    int    `json:"epochs"`
	Questions int    `json:"questions"`
	// Unanswerable counts the training questions also asked against a
	// pool without their database (train-atr --unanswerable).
	Unanswerable int     `json:"unanswerable,omitempty"`
	Windows      int     `json:"windows"`
	TrainLoss    float64 `json:"train_loss"`
	ValidLoss    float64 `json:"valid_loss"`
	ValidF1      float64 `json:"valid_f1"`
	BestEpoch    int     `json:"best_epoch"`
	// AveragedEpochs, when positive, says the weights are the mean of the
	// last AveragedEpochs epochs (train-atr --average-epochs), ending at
	// BestEpoch.
	AveragedEpochs int    `json:"averaged_epochs,omitempty"`
	Embedder       string `json:"embedder"`
	// MeasuredWith names other embedders these weights were evaluated
	// with and found fit to serve with (the shipped weights: words-v1,
	// docs/retrieval.md steps 25, 26 and 30). train-atr leaves it empty; a
	// person adds a name with the measurement that backs it.
	MeasuredWith []string `json:"measured_with,omitempty"`
	Candidates   int      `json:"candidates"`
	PoolDBs      int      `json:"pool_dbs"`
	// HeldOutATR and HeldOutDefault are Algorithm 1 alone and ATR +
	// expansion on the held-out training questions, with the shipped
	// threshold bias and margins.
	HeldOutATR     *HeldOutStats `json:"held_out_atr,omitempty"`
	HeldOutDefault *HeldOutStats `json:"held_out_default,omitempty"`
}

const liteFormat = "atrium-lite-v2"

// DefaultLiteModel returns the weights shipped in the binary.
func DefaultLiteModel() (*LiteModel, error) {
	return ParseLiteModel(liteWeightsJSON)
}

// LoadLiteModel reads a weights file written by atrium train-atr.
func LoadLiteModel(path string) (*LiteModel, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read lite weights: %w", err)
	}
	m, err := ParseLiteModel(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// ParseLiteModel decodes and checks a weights file written by Train.
func ParseLiteModel(b []byte) (*LiteModel, error) {
	var m LiteModel
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("decode lite weights: %w", err)
	}
	if err := m.check(); err != nil {
		return nil, err
	}
	return &m, nil
}

// ErrBadWeights reports a weights file that does not fit this build.
var ErrBadWeights = errors.New("lite scorer weights do not match this build (run `atrium train-atr`)")

func (m *LiteModel) check() error {
	if m.Abstain != nil {
		if m.Abstain.Abstain != nil {
			return fmt.Errorf("%w: abstention model nests another", ErrBadWeights)
		}
		if err := m.Abstain.check(); err != nil {
			return fmt.Errorf("abstention model: %w", err)
		}
	}
	if len(m.Members) > 0 {
		if m.Format != liteFormat || m.PairFeatures != numPairFeatures || m.ThreshFeatures != numThreshFeatures ||
			m.Hidden != 0 || len(m.W1) != 0 {
			return fmt.Errorf("%w: ensemble: format %q, %d/%d features", ErrBadWeights, m.Format, m.PairFeatures, m.ThreshFeatures)
		}
		for i, mm := range m.Members {
			if mm == nil || len(mm.Members) > 0 || mm.Abstain != nil || mm.ThresholdBias != 0 || mm.RelativeCut != 0 {
				return fmt.Errorf("%w: ensemble member %d is not a plain network", ErrBadWeights, i)
			}
			if err := mm.check(); err != nil {
				return fmt.Errorf("ensemble member %d: %w", i, err)
			}
		}
		return nil
	}
	switch {
	case m.Format != liteFormat,
		m.PairFeatures != numPairFeatures, m.ThreshFeatures != numThreshFeatures,
		len(m.PairMean) != numPairFeatures, len(m.PairStd) != numPairFeatures,
		len(m.ThrMean) != numThreshFeatures, len(m.ThrStd) != numThreshFeatures,
		len(m.W1) != m.Hidden, len(m.B1) != m.Hidden, len(m.W2) != m.Hidden,
		len(m.V) != numThreshFeatures, len(m.U) != numPairFeatures:
		return fmt.Errorf("%w: format %q, %d/%d features", ErrBadWeights, m.Format, m.PairFeatures, m.ThreshFeatures)
	}
	for _, r := range m.W1 {
		if len(r) != numPairFeatures {
			return fmt.Errorf("%w: hidden row of %d", ErrBadWeights, len(r))
		}
	}
	return nil
}

// Score implements Scorer.
func (m *LiteModel) Score(_ context.Context, q *Query, window []*Candidate) ([]float64, float64, error) {
	pair, thr := windowFeatures(q, window)
	logits, t := m.rawScore(pair, thr)
	return logits, relativeThreshold(t+m.ThresholdBias, logits, m.RelativeCut), nil
}

// rawScore is the network's (or the members' mean) table logits and
// threshold logit before the operating point applies. thr is the window's
// threshold features; its logit slots are filled here.
func (m *LiteModel) rawScore(pair [][]float64, thr []float64) ([]float64, float64) {
	logits := make([]float64, len(pair))
	if len(m.Members) > 0 {
		// Each member's threshold reads its own logits' statistics (the
		// threshold token sees the window as that network scored it).
		own := make([]float64, len(thr))
		t := 0.0
		inv := 1 / float64(len(m.Members))
		for _, mm := range m.Members {
			copy(own, thr)
			l, tt := mm.rawScore(pair, own)
			for i := range l {
				logits[i] += l[i] * inv
			}
			t += tt * inv
		}
		setLogitStats(thr, logits)
		return logits, t
	}
	h := make([]float64, m.Hidden)
	x := make([]float64, numPairFeatures)
	for i, f := range pair {
		logits[i] = m.pairLogit(f, x, h)
	}
	setLogitStats(thr, logits)
	return logits, m.threshLogit(thr)
}

func (m *LiteModel) pairLogit(f, x, h []float64) float64 {
	for k := range f {
		x[k] = (f[k] - m.PairMean[k]) / m.PairStd[k]
	}
	out := m.B2
	for k, v := range x {
		out += m.U[k] * v
	}
	for j := 0; j < m.Hidden; j++ {
		a := m.B1[j]
		w := m.W1[j]
		for k, v := range x {
			a += w[k] * v
		}
		h[j] = math.Tanh(a)
		out += m.W2[j] * h[j]
	}
	return out
}

func (m *LiteModel) threshLogit(t []float64) float64 {
	out := 0.0
	for k, v := range t {
		out += m.V[k] * (v - m.ThrMean[k]) / m.ThrStd[k]
	}
	return out
}

// HeldOutStats are per-question means over the held-out training questions.
type HeldOutStats struct {
	Precision      float64 `json:"precision"`
	Recall         float64 `json:"recall"`
	CompleteRecall float64 `json:"complete_recall"`
	F1             float64 `json:"f1"`
	AvgTables      float64 `json:"avg_tables"`
	AvgGold        float64 `json:"avg_gold"`
}
