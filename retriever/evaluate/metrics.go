package evaluate

import (
	"math"
	"sort"
	"time"
)

// SetScore is one question's retrieval quality.
type SetScore struct {
	Precision, Recall, F1 float64
	Complete              bool
	Returned              int
}

// ScoreSet compares returned tables with gold ones (both "schema.table",
// compared as given; callers lower-case).
func ScoreSet(returned, gold []string) SetScore {
	g := map[string]bool{}
	for _, t := range gold {
		g[t] = true
	}
	seen := map[string]bool{}
	hit := 0
	for _, t := range returned {
		if seen[t] {
			continue
		}
		seen[t] = true
		if g[t] {
			hit++
		}
	}
	s := SetScore{Returned: len(seen)}
	if len(seen) > 0 {
		s.Precision = float64(hit) / float64(len(seen))
	}
	if len(g) > 0 {
		s.Recall = float64(hit) / float64(len(g))
	}
	if s.Precision+s.Recall > 0 {
		s.F1 = 2 * s.Precision * s.Recall / (s.Precision + s.Recall)
	}
	s.Complete = len(g) > 0 && hit == len(g)
	return s
}

// MethodStats aggregates one method over a benchmark; quality figures are
// per-question means between 0 and 1 over the answerable questions.
// Unanswerable counts the questions without gold tables; Abstain is the
// share of them with nothing chosen (the right answer), FalseAbstain the
// share of answerable questions with nothing chosen.
type MethodStats struct {
	Precision      float64 `json:"precision"`
	Recall         float64 `json:"recall"`
	CompleteRecall float64 `json:"complete_recall"`
	F1             float64 `json:"f1"`
	AvgTables      float64 `json:"avg_tables"`
	P50Ms          float64 `json:"p50_ms"`
	P95Ms          float64 `json:"p95_ms"`
	Unanswerable   int     `json:"unanswerable"`
	Abstain        float64 `json:"abstain"`
	FalseAbstain   float64 `json:"false_abstain"`
	// AbstainByKind is Abstain per kind of unanswerable question (the
	// questions' "kind" field; absent when none is labelled).
	AbstainByKind map[string]float64 `json:"abstain_by_kind,omitempty"`
}

// accumulator collects per-question scores and latencies for one method.
type accumulator struct {
	n                   int // answerable questions
	p, r, f, cr, tables float64
	falseAbstain        int
	unans, abstain      int
	kindN, kindAbstain  map[string]int
	lat                 []time.Duration
}

// add records one question: gold nil means unanswerable. Latency counts
// every question.
func (a *accumulator) add(kind string, got, gold []string, lat time.Duration) {
	a.lat = append(a.lat, lat)
	s := ScoreSet(got, gold)
	if len(gold) == 0 {
		a.unans++
		empty := s.Returned == 0
		if empty {
			a.abstain++
		}
		if kind != "" {
			if a.kindN == nil {
				a.kindN, a.kindAbstain = map[string]int{}, map[string]int{}
			}
			a.kindN[kind]++
			if empty {
				a.kindAbstain[kind]++
			}
		}
		return
	}
	a.n++
	a.p += s.Precision
	a.r += s.Recall
	a.f += s.F1
	a.tables += float64(s.Returned)
	if s.Complete {
		a.cr++
	}
	if s.Returned == 0 {
		a.falseAbstain++
	}
}

func (a *accumulator) stats() MethodStats {
	var st MethodStats
	if a.n > 0 {
		n := float64(a.n)
		st = MethodStats{
			Precision: a.p / n, Recall: a.r / n, CompleteRecall: a.cr / n, F1: a.f / n, AvgTables: a.tables / n,
			FalseAbstain: float64(a.falseAbstain) / n,
		}
	}
	st.P50Ms, st.P95Ms = percentileMs(a.lat, 0.50), percentileMs(a.lat, 0.95)
	st.Unanswerable = a.unans
	if a.unans > 0 {
		st.Abstain = float64(a.abstain) / float64(a.unans)
	}
	for k, c := range a.kindN {
		if st.AbstainByKind == nil {
			st.AbstainByKind = map[string]float64{}
		}
		st.AbstainByKind[k] = float64(a.kindAbstain[k]) / float64(c)
	}
	return st
}

// percentileMs is the nearest-rank percentile in milliseconds.
func percentileMs(d []time.Duration, p float64) float64 {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(math.Ceil(p*float64(len(s)))) - 1
	i = min(max(i, 0), len(s)-1)
	return float64(s[i]) / float64(time.Millisecond)
}
