package retriever

import "math"

// DefaultAbstainFloor is the shipped Config.AbstainFloor: the lowest logit
// the best table must reach for the retriever to choose anything. It is a
// logit of the shipped lite scorer, chosen on training-derived questions
// only (Spider train questions asked against 20 training databases without
// their own, off-topic questions written for tuning, and answerable Spider
// train questions in pools with their database): see "Abstention" in
// docs/retrieval.md for the trade-off curve and the command that measures
// it. Retraining the scorer changes its logit scale, so the floor must be
// re-measured with it.
const DefaultAbstainFloor = -math.MaxFloat64

// abstain reports whether ATR's best table is too weak for any table to be
// chosen. Algorithm 1 never forces a table on its own (its threshold can
// outrank every table), but the lite scorer's threshold is calibrated for
// answerable questions and is relative to the window's best table (the
// relative cut), so an off-topic question still gets its least-bad tables;
// an absolute floor on the best logit is what tells "nothing answers" apart.
func abstain(atr *atrResult, floor float64) bool {
	if atr.Selected == 0 || len(atr.Ranked) == 0 {
		return false
	}
	best := atr.Ranked[0].Logit
	for _, s := range atr.Ranked[:atr.Selected] {
		best = max(best, s.Logit)
	}
	return best < floor
}
