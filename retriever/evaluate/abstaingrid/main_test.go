package main

import (
	"math"
	"testing"
)

// The replay abstains on an empty selection, a weak logit, low coverage,
// or coverage and cosine both low — and counts F1 and complete recall over
// answerable questions with an abstention scored as nothing found.
func TestMeasureReplaysRule(t *testing.T) {
	logit := func(x float64) *float64 { return &x }
	qs := []record{
		{Unanswerable: true, Kind: "offtopic", Selected: []string{"a"}, BestLogit: logit(0), Coverage: 0.25, BestCosine: 0.05},   // both low
		{Unanswerable: true, Kind: "foreign_db", Selected: []string{"a"}, BestLogit: logit(0), Coverage: 0.25, BestCosine: 0.20}, // cosine clears
		{Unanswerable: true, Kind: "foreign_db", Selected: nil, Coverage: 1},                                                     // nothing selected
		{Selected: []string{"a"}, BestLogit: logit(0), Coverage: 0.50, BestCosine: 0.01, F1: 1, Complete: true},                  // coverage clears
		{Selected: []string{"a"}, BestLogit: logit(-2), Coverage: 1, BestCosine: 1, F1: 1, Complete: true},                       // under the floor
	}
	p := measure(qs, rule{floor: -1.25, cov: 0.20, evCov: 0.30, evCos: 0.09})
	if math.Abs(p.abstain-2.0/3) > 1e-9 || p.falseAbs != 0.5 || p.f1 != 0.5 || p.cr != 0.5 {
		t.Fatalf("abstain %.3f false %.3f f1 %.3f cr %.3f, want 0.667 0.5 0.5 0.5", p.abstain, p.falseAbs, p.f1, p.cr)
	}
	if p.byKind["offtopic"] != 1 || p.byKind["foreign_db"] != 0.5 {
		t.Fatalf("by kind %v", p.byKind)
	}
	off := measure(qs, rule{floor: math.Inf(-1), evCos: math.Inf(-1)})
	if math.Abs(off.abstain-1.0/3) > 1e-9 || off.falseAbs != 0 {
		t.Fatalf("off: abstain %.3f false %.3f, want 0.333 and 0", off.abstain, off.falseAbs)
	}
}
