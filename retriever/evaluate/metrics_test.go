package evaluate

import (
	"math"
	"testing"
	"time"

	"github.com/atriumdb/atrium/catalog/benchload"
	"github.com/atriumdb/atrium/retriever"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// Unanswerable questions (gold nil) feed only the abstention figures;
// P/R/CR/F1 and false abstention are over the answerable ones.
func TestAccumulatorUnanswerable(t *testing.T) {
	a := &accumulator{}
	a.add("", []string{"s.a"}, []string{"s.a"}, time.Millisecond)         // perfect
	a.add("", []string{"s.a", "s.b"}, []string{"s.a"}, time.Millisecond)  // P 0.5
	a.add("", nil, []string{"s.c"}, time.Millisecond)                     // false abstention
	a.add("offtopic", nil, nil, time.Millisecond)                         // right abstention
	a.add("offtopic", []string{"s.x"}, nil, time.Millisecond)             // answered the unanswerable
	a.add("foreign_db", nil, nil, time.Millisecond)                       // right abstention
	a.add("foreign_db", []string{"s.y", "s.z"}, nil, 10*time.Millisecond) // answered the unanswerable
	a.add("foreign_db", []string{"s.y"}, nil, 2*time.Millisecond)         // answered the unanswerable
	st := a.stats()
	if st.Unanswerable != 5 {
		t.Fatalf("unanswerable = %d, want 5", st.Unanswerable)
	}
	if !near(st.Abstain, 2.0/5) || !near(st.FalseAbstain, 1.0/3) {
		t.Fatalf("abstain %.3f false_abstain %.3f, want 0.4 and 0.333", st.Abstain, st.FalseAbstain)
	}
	if !near(st.Precision, 1.5/3) || !near(st.Recall, 2.0/3) || !near(st.CompleteRecall, 2.0/3) {
		t.Fatalf("P %.3f R %.3f CR %.3f over answerable questions", st.Precision, st.Recall, st.CompleteRecall)
	}
	if !near(st.AvgTables, 3.0/3) {
		t.Fatalf("avg tables %.3f, want 1 (answerable only)", st.AvgTables)
	}
	if !near(st.AbstainByKind["offtopic"], 0.5) || !near(st.AbstainByKind["foreign_db"], 1.0/3) {
		t.Fatalf("by kind %v", st.AbstainByKind)
	}
	if st.P95Ms != 10 {
		t.Fatalf("p95 %.1f ms: latency must count every question", st.P95Ms)
	}
}

// A benchmark of only unanswerable questions reports abstention and no
// division by zero.
func TestAccumulatorOnlyUnanswerable(t *testing.T) {
	a := &accumulator{}
	a.add("", nil, nil, time.Millisecond)
	st := a.stats()
	if st.Unanswerable != 1 || st.Abstain != 1 || st.FalseAbstain != 0 || st.F1 != 0 || len(st.AbstainByKind) != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func scored(id int64, name string, rank int, logit, thr float64) *retriever.Scored {
	c := &retriever.Candidate{Table: &retriever.TableInfo{ID: id, Schema: "db", Name: name}, Rank: rank, S: 1 / float64(rank)}
	return &retriever.Scored{Candidate: c, Logit: logit, Threshold: thr}
}

// Each lost gold table gets the stage that lost it.
func TestQuestionRecordReasons(t *testing.T) {
	a := scored(1, "a", 1, 3, 1)   // selected and chosen
	b := scored(2, "b", 2, 0.5, 1) // below threshold
	c := scored(3, "c", 3, 2, 1)   // selected, dropped by refinement
	d := scored(4, "d", 4, -1, 1)  // rejected non-gold
	res := &retriever.Result{
		Candidates: []*retriever.Candidate{a.Candidate, b.Candidate, c.Candidate, d.Candidate},
		Ranked:     []*retriever.Scored{a, c, b, d},
		Selected:   []*retriever.TableInfo{a.Table, c.Table},
		BestLogit:  3, // what abstention judged: the retriever sets it
		ATR:        []*retriever.TableInfo{a.Table, c.Table},
		Tables: []retriever.ResultTable{
			{Rank: 1, Table: a.Table, Chosen: true},
			{Rank: 2, Table: c.Table},
		},
	}
	q := &benchload.Question{DBID: "db", Question: "q"}
	gold := []string{"db.a", "db.b", "db.c", "db.missing"}
	rec := NewQuestionRecord(7, q, gold, res)
	want := map[string]string{"db.b": LostBelowThreshold, "db.c": LostByExpansion, "db.missing": LostNotCandidate}
	if len(rec.Lost) != len(want) {
		t.Fatalf("lost %+v", rec.Lost)
	}
	for _, l := range rec.Lost {
		if want[l.Table] != l.Reason {
			t.Errorf("%s lost as %q, want %q", l.Table, l.Reason, want[l.Table])
		}
	}
	if rec.BestLogit == nil || *rec.BestLogit != 3 {
		t.Fatalf("best logit %v, want 3", rec.BestLogit)
	}
	if len(rec.Candidates) != 4 || rec.Candidates[2].ATRRank != 2 || !rec.Candidates[2].Selected || rec.Candidates[2].Chosen || rec.Candidates[0].Margin != 2 {
		t.Fatalf("candidates %+v", rec.Candidates)
	}
	if !near(rec.Recall, 0.25) || rec.Complete {
		t.Fatalf("recall %.2f complete %v", rec.Recall, rec.Complete)
	}

	// The same selection under abstention: nothing chosen, the selected
	// gold tables lost to it.
	res.Abstained, res.ATR = true, nil
	res.Tables = []retriever.ResultTable{{Rank: 1, Table: a.Table}, {Rank: 2, Table: c.Table}}
	rec = NewQuestionRecord(7, q, gold, res)
	for _, l := range rec.Lost {
		if (l.Table == "db.a" || l.Table == "db.c") && l.Reason != LostAbstained {
			t.Errorf("%s lost as %q, want %q", l.Table, l.Reason, LostAbstained)
		}
	}
	if len(rec.Chosen) != 0 || !rec.Abstained {
		t.Fatalf("chosen %v abstained %v", rec.Chosen, rec.Abstained)
	}
}

// The curve replays abstention: below a question's best logit its set
// empties; the chosen floor keeps false abstention under the bound.
func TestAbstainCurve(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	samples := []curveSample{
		{best: f(3), score: SetScore{F1: 1, Complete: true}, chosen: 1},
		{best: f(1), score: SetScore{F1: 0.5}, chosen: 2},
		{unanswerable: true, best: f(0.2), chosen: 1},
		{unanswerable: true, best: f(-1), chosen: 1},
		{unanswerable: true, best: nil, chosen: 0},
	}
	p := curveAt(samples, 0.5, 0)
	if !near(p.Abstain, 1) || p.FalseAbstain != 0 || !near(p.F1, 0.75) || !near(p.CR, 0.5) {
		t.Fatalf("at 0.5: %+v", p)
	}
	p = curveAt(samples, 2, 0)
	if !near(p.FalseAbstain, 0.5) || !near(p.F1, 0.5) {
		t.Fatalf("at 2: %+v", p)
	}
	best, ok := ChooseFloor(abstainCurve(samples), 0)
	if !ok || !near(best.Abstain, 1) || best.Floor > 1 || best.Floor <= 0.2 {
		t.Fatalf("chosen %+v", best)
	}
	// Two runs whose logits lie far apart still list the same floors
	// in [-3, 3], so their curves pool point by point.
	floors := func(c []CurvePoint) map[float64]bool {
		m := map[float64]bool{}
		for _, p := range c {
			m[p.Floor] = true
		}
		return m
	}
	high := floors(abstainCurve([]curveSample{{best: f(2.6), chosen: 1}}))
	low := floors(abstainCurve([]curveSample{{best: f(-2.4), chosen: 1}}))
	for x := -3.0; x <= 3; x += 0.25 {
		if !high[x] || !low[x] {
			t.Fatalf("floor %v missing: %v / %v", x, high[x], low[x])
		}
	}
}
