package evaluate

import (
	"fmt"
	"io"
	"math"
	"sort"
)

// CurvePoint is the default pipeline's quality at one abstention floor.
type CurvePoint struct {
	Floor        float64 `json:"floor"`
	Coverage     float64 `json:"coverage"`
	Abstain      float64 `json:"abstain"`
	FalseAbstain float64 `json:"false_abstain"`
	F1           float64 `json:"f1"`
	CR           float64 `json:"complete_recall"`
}

// curveSample is one question of a run without an abstention floor.
type curveSample struct {
	unanswerable bool
	best         *float64 // best selected logit; nil: nothing selected
	coverage     float64  // share of the question's content words selected tables name
	score        SetScore
	chosen       int
}

// abstainCurve replays abstention over floors: with no floor active the
// run's chosen sets are exact for every floor the question's best logit
// reaches, and empty below it (abstention precedes expansion, and
// expanding an empty set leaves it empty).
func abstainCurve(samples []curveSample) []CurvePoint {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range samples {
		if s.best != nil {
			lo, hi = min(lo, *s.best), max(hi, *s.best)
		}
	}
	if math.IsInf(lo, 1) {
		return nil
	}
	// Every curve spans at least curveSpan either side of 0, whatever its
	// own logits, so that curves of different runs (the folds of a
	// cross-validation) list the same floors and can be pooled point by
	// point; a floor below every best logit abstains no more than none.
	const step, curveSpan = 0.25, 3.0
	lo = math.Max(math.Min(math.Floor(lo/step)*step-step, -curveSpan), -20)
	hi = math.Min(math.Max(math.Ceil(hi/step)*step, curveSpan), 20)
	var out []CurvePoint
	for c := 0; c <= 20; c++ {
		for f := lo; f <= hi+1e-9; f += step {
			out = append(out, curveAt(samples, f, float64(c)*0.05))
		}
	}
	return out
}

func curveAt(samples []curveSample, floor, cov float64) CurvePoint {
	p := CurvePoint{Floor: floor, Coverage: cov}
	var nu, na int
	var abst, fabst int
	for _, s := range samples {
		empty := s.chosen == 0 || s.best == nil || *s.best < floor || s.coverage < cov-1e-9
		if s.unanswerable {
			nu++
			if empty {
				abst++
			}
			continue
		}
		na++
		if empty {
			fabst++
			continue
		}
		p.F1 += s.score.F1
		if s.score.Complete {
			p.CR++
		}
	}
	if nu > 0 {
		p.Abstain = float64(abst) / float64(nu)
	}
	if na > 0 {
		p.FalseAbstain = float64(fabst) / float64(na)
		p.F1 /= float64(na)
		p.CR /= float64(na)
	}
	return p
}

// ChooseFloor is the point of a curve with the most abstention whose false
// abstention stays at or under maxFalse; ties go to the better F1, then to
// the loosest floors: the shipped defaults are chosen this way on
// training-derived questions.
func ChooseFloor(curve []CurvePoint, maxFalse float64) (CurvePoint, bool) {
	pts := append([]CurvePoint(nil), curve...)
	sort.SliceStable(pts, func(i, j int) bool {
		if pts[i].Coverage != pts[j].Coverage {
			return pts[i].Coverage < pts[j].Coverage
		}
		return pts[i].Floor < pts[j].Floor
	})
	var best CurvePoint
	ok := false
	for _, p := range pts {
		if p.FalseAbstain > maxFalse {
			continue
		}
		if !ok || p.Abstain > best.Abstain+1e-12 || (p.Abstain > best.Abstain-1e-12 && p.F1 > best.F1+1e-12) {
			best, ok = p, true
		}
	}
	return best, ok
}

func writeCurve(w io.Writer, curve []CurvePoint) {
	fmt.Fprintf(w, "abstention trade-off (default pipeline, replayed from a run without a floor)\n")
	fmt.Fprintf(w, "per coverage floor, the logit floor with the most abstention at false_abstain <= 0.02:\n")
	fmt.Fprintf(w, "%8s %7s %8s %10s %6s %8s\n", "coverage", "floor", "abstain", "false_abs", "f1", "complete")
	byCov := map[float64][]CurvePoint{}
	var covs []float64
	for _, p := range curve {
		if byCov[p.Coverage] == nil {
			covs = append(covs, p.Coverage)
		}
		byCov[p.Coverage] = append(byCov[p.Coverage], p)
	}
	sort.Float64s(covs)
	for _, c := range covs {
		if p, ok := ChooseFloor(byCov[c], 0.02); ok {
			fmt.Fprintf(w, "%8.2f %7.2f %8.3f %10.3f %6.3f %8.3f\n", p.Coverage, p.Floor, p.Abstain, p.FalseAbstain, p.F1, p.CR)
		}
	}
	for _, m := range []float64{0.01, 0.02, 0.03, 0.05} {
		if p, ok := ChooseFloor(curve, m); ok {
			fmt.Fprintf(w, "most abstention with false_abstain <= %.2f: coverage %.2f, floor %.2f (abstain %.3f, false_abstain %.3f, f1 %.3f, complete %.3f)\n",
				m, p.Coverage, p.Floor, p.Abstain, p.FalseAbstain, p.F1, p.CR)
		}
	}
}
