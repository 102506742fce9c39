package retriever

import (
	"context"
	"fmt"
	"sort"
)

// Scored is a candidate after ATR: its logit and the threshold logit of the
// window in which it was last scored.
type Scored struct {
	*Candidate
	Logit     float64
	Threshold float64
}

// Margin is the logit minus the threshold of the same window: above 0 the
// scorer rates the table relevant.
func (s *Scored) Margin() float64 { return s.Logit - s.Threshold }

// atrResult is the outcome of Algorithm 1.
type atrResult struct {
	// Ranked is every candidate in ATR's final order, best first.
	Ranked []*Scored
	// Selected is the number of leading entries of Ranked that outrank the
	// threshold.
	Selected int
	// Threshold is the threshold logit of the window that finalised its rank.
	Threshold float64
	// Windows is how many windows were scored.
	Windows int
	// trace records each scored window (training replays Algorithm 1 with
	// shifted thresholds from it: the windows depend on the table logits
	// only, not on the threshold).
	trace []windowTrace
}

// relativeThreshold raises a threshold logit to the window's best table
// logit minus cut (cut 0: unchanged): a table far below the window's best
// is not returned however low the threshold token scores.
func relativeThreshold(thr float64, logits []float64, cut float64) float64 {
	if cut <= 0 || len(logits) == 0 {
		return thr
	}
	best := logits[0]
	for _, l := range logits[1:] {
		best = max(best, l)
	}
	return max(thr, best-cut)
}

// windowTrace is one window of Algorithm 1: its table logits, its
// threshold logit and idx after the window was taken.
type windowTrace struct {
	logits []float64
	thr    float64
	idx    int
}

// thresholdRank replays Algorithm 1's threshold bookkeeping over a trace
// with every threshold logit t replaced by relativeThreshold(t+bias, the
// window's logits, cut) and returns how many of the ranked tables outrank
// the threshold.
func thresholdRank(trace []windowTrace, R int, bias, cut float64, n int) int {
	thrRank := 0
	for _, w := range trace {
		thr := relativeThreshold(w.thr+bias, w.logits, cut)
		rank := 1
		for _, l := range w.logits {
			if l > thr {
				rank++
			}
		}
		thrRank = rank + w.idx
		if rank > R {
			break
		}
	}
	return min(max(thrRank-1, 0), n)
}

// adaptiveRetrieve is ATR's Algorithm 1 (sliding-window reranking with an
// adaptive threshold), transcribed with 0-based slices. cands is ordered best
// first. Windows are scored from the lowest-ranked end upwards; each keeps
// its top R tables by logit and merges them with the next W−R; the
// threshold's rank is final once it falls below the retained R within a
// window; the result is the tables that outrank it.
func adaptiveRetrieve(ctx context.Context, s Scorer, q *Query, cands []*Candidate, W, R int) (*atrResult, error) {
	if W <= 0 || R < 0 || R >= W {
		return nil, fmt.Errorf("atr: need 0 <= R < W, got W=%d R=%d", W, R)
	}
	res := &atrResult{}
	if len(cands) == 0 {
		return res, nil
	}
	scored := make(map[*Candidate]*Scored, len(cands))
	var out []*Scored // C′ in the paper, built in ascending score order
	var retain []*Scored
	idx := len(cands)
	thrRank := 0
	finalized := false
	for idx > 0 {
		var window []*Candidate
		if len(retain) == 0 {
			lo := max(idx-W, 0)
			window = append(window, cands[lo:idx]...)
			idx = lo
		} else {
			lo := max(idx-(W-R), 0)
			window = append(window, cands[lo:idx]...)
			for _, r := range retain {
				window = append(window, r.Candidate)
			}
			idx = lo
		}
		logits, thr, err := s.Score(ctx, q, window)
		if err != nil {
			return nil, fmt.Errorf("atr: score window: %w", err)
		}
		if len(logits) != len(window) {
			return nil, fmt.Errorf("atr: scorer returned %d logits for %d tables", len(logits), len(window))
		}
		res.Windows++
		res.trace = append(res.trace, windowTrace{logits: logits, thr: thr, idx: idx})
		ws := make([]*Scored, len(window))
		for i, c := range window {
			sc := scored[c]
			if sc == nil {
				sc = &Scored{Candidate: c}
				scored[c] = sc
			}
			sc.Logit, sc.Threshold = logits[i], thr
			ws[i] = sc
		}
		// Descending by logit; ties keep the hybrid order so results are
		// deterministic.
		sort.SliceStable(ws, func(i, j int) bool {
			if ws[i].Logit != ws[j].Logit {
				return ws[i].Logit > ws[j].Logit
			}
			return ws[i].Rank < ws[j].Rank
		})
		r := min(R, len(ws))
		retain = append([]*Scored(nil), ws[:r]...)
		if !finalized {
			// Rank(logit): 1-based rank of the threshold among the window's
			// logits and itself.
			rank := 1
			for _, w := range ws {
				if w.Logit > thr {
					rank++
				}
			}
			thrRank = rank + idx
			res.Threshold = thr
			if rank > R {
				finalized = true
			}
		}
		for i := len(ws) - 1; i >= r; i-- {
			out = append(out, ws[i])
		}
	}
	for i := len(retain) - 1; i >= 0; i-- {
		out = append(out, retain[i])
	}
	// Reverse into best-first order.
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	res.Ranked = out
	res.Selected = min(max(thrRank-1, 0), len(out))
	return res, nil
}
