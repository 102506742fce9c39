package evaluate

import (
	"math"
	"strings"

	"github.com/atriumdb/atrium/catalog/benchload"
	"github.com/atriumdb/atrium/retriever"
)

// Reasons a gold table is missing from the chosen set, by the stage that
// lost it.
const (
	// LostNotCandidate: the hybrid stage did not rank it among the C
	// candidates ATR reranks.
	LostNotCandidate = "not_candidate"
	// LostBelowThreshold: a candidate, but Algorithm 1's threshold
	// outranked it.
	LostBelowThreshold = "below_threshold"
	// LostAbstained: Algorithm 1 selected it, but the best table's logit
	// was under the abstention floor, so nothing was chosen.
	LostAbstained = "abstained"
	// LostByExpansion: Algorithm 1 selected it and expansion's refinement
	// dropped it (its join group lost to the best table's).
	LostByExpansion = "dropped_by_expansion"
)

// QuestionRecord is one line of `atrium eval --per-question`.
type QuestionRecord struct {
	Index        int      `json:"index"`
	Question     string   `json:"question"`
	DB           string   `json:"db"`
	Kind         string   `json:"kind,omitempty"`
	Unanswerable bool     `json:"unanswerable"`
	ExcludedDBs  []string `json:"excluded_dbs,omitempty"`
	Gold         []string `json:"gold"`
	// Candidates are the hybrid stage's list in its order, with ATR's
	// verdict on each.
	Candidates []CandidateRecord `json:"candidates"`
	// Selected is Algorithm 1's selection before abstention; Chosen the
	// final set (after abstention and expansion).
	Selected  []string `json:"selected"`
	Chosen    []string `json:"chosen"`
	Abstained bool     `json:"abstained"`
	// BestLogit is the best logit among Algorithm 1's selection (null when
	// it selected nothing): what the abstention floor is compared with.
	BestLogit *float64 `json:"best_logit"`
	// Coverage is the share of the question's content words the selection
	// names (the other abstention signal).
	Coverage float64 `json:"coverage"`
	// BestCosine is the best raw embedding cosine among the selection
	// (0 when it is empty); MaxCosine the best among all candidates.
	BestCosine float64 `json:"best_cosine"`
	MaxCosine  float64 `json:"max_cosine"`
	// BestWordCosine is the best word-vector cosine among the selection
	// (1 when none of it has a word vector; 0 when it is empty).
	BestWordCosine float64 `json:"best_word_cosine"`
	Threshold      float64 `json:"threshold"`
	// Rewrites are the question words scored as schema words
	// ("nation→country").
	Rewrites []string `json:"rewrites,omitempty"`
	// NonFinite counts candidates with a NaN or infinite score or logit
	// (written as 0).
	NonFinite int `json:"non_finite,omitempty"`
	// Lost explains each gold table missing from Chosen.
	Lost      []LostTable `json:"lost,omitempty"`
	Precision float64     `json:"precision"`
	Recall    float64     `json:"recall"`
	F1        float64     `json:"f1"`
	Complete  bool        `json:"complete"`
	// Examples are the closest examples (--examples split), best first.
	Examples []ExampleRecord `json:"examples,omitempty"`
}

// ExampleRecord is one example close to a question.
type ExampleRecord struct {
	Question   string   `json:"question"`
	Similarity float64  `json:"similarity"`
	Exact      bool     `json:"exact,omitempty"`
	Tables     []string `json:"tables"`
}

// CandidateRecord is one hybrid candidate of a QuestionRecord.
type CandidateRecord struct {
	Table string `json:"table"`
	// Rank and Score are the hybrid stage's; ATRRank, Logit and Margin
	// (logit minus its window's threshold) ATR's.
	Rank     int     `json:"rank"`
	Score    float64 `json:"score"`
	ATRRank  int     `json:"atr_rank,omitempty"`
	Logit    float64 `json:"logit"`
	Margin   float64 `json:"margin"`
	Selected bool    `json:"selected,omitempty"`
	Chosen   bool    `json:"chosen,omitempty"`
}

// LostTable is a gold table missing from the chosen set and why.
type LostTable struct {
	Table  string `json:"table"`
	Reason string `json:"reason"`
	// Rank is its hybrid rank and Margin its ATR margin, when it was a
	// candidate.
	Rank   int      `json:"rank,omitempty"`
	Margin *float64 `json:"margin,omitempty"`
}

// NewQuestionRecord explains one retrieval: gold holds the question's gold
// tables (lower-case "schema.table"; nil for an unanswerable question).
func NewQuestionRecord(i int, q *benchload.Question, gold []string, res *retriever.Result) *QuestionRecord {
	rec := &QuestionRecord{Index: i, Question: q.Question, DB: q.DBID, Kind: q.Kind, Unanswerable: gold == nil,
		ExcludedDBs: q.ExcludeDBs, Gold: gold, Abstained: res.Abstained, Threshold: round4(res.Threshold),
		Selected: lowerNames(res.Selected), Chosen: []string{}}
	if rec.Gold == nil {
		rec.Gold = []string{}
	}
	if rec.Selected == nil {
		rec.Selected = []string{}
	}
	rec.Coverage = round4(res.Coverage)
	rec.BestCosine = round4(res.BestCosine)
	rec.BestWordCosine = round4(res.BestWordCosine)
	rec.Rewrites = retriever.RewriteStrings(res.Rewrites)
	for _, c := range res.Candidates {
		rec.MaxCosine = max(rec.MaxCosine, round4(c.SemRaw))
	}
	for _, e := range res.Examples {
		var ts []string
		for _, t := range e.Tables {
			ts = append(ts, strings.ToLower(t))
		}
		rec.Examples = append(rec.Examples, ExampleRecord{Question: e.Question, Similarity: round4(e.Similarity), Exact: e.Exact, Tables: ts})
	}
	for _, t := range res.Chosen() {
		rec.Chosen = append(rec.Chosen, strings.ToLower(t.Table.QualifiedName()))
	}
	chosen := setOf(rec.Chosen)
	selected := setOf(rec.Selected)
	atrRank := map[int64]int{}
	scored := map[int64]*retriever.Scored{}
	for k, s := range res.Ranked {
		atrRank[s.Table.ID] = k + 1
		scored[s.Table.ID] = s
	}
	// The abstention floors' logit: with a separate abstention model
	// (LiteModel.Abstain) it is that model's, not a ranked logit below.
	if best := res.BestLogit; finite(best) {
		rec.BestLogit = &best
	}
	cand := map[string]*CandidateRecord{}
	for _, c := range res.Candidates {
		name := strings.ToLower(c.Table.QualifiedName())
		cr := CandidateRecord{Table: name, Rank: c.Rank, Score: round4(c.S), Selected: selected[name], Chosen: chosen[name]}
		nonFinite := !finite(c.S)
		if s := scored[c.Table.ID]; s != nil {
			cr.ATRRank, cr.Logit, cr.Margin = atrRank[c.Table.ID], round4(s.Logit), round4(s.Margin())
			nonFinite = nonFinite || !finite(s.Logit) || !finite(s.Threshold)
		}
		if nonFinite {
			rec.NonFinite++
		}
		rec.Candidates = append(rec.Candidates, cr)
		cand[name] = &rec.Candidates[len(rec.Candidates)-1]
	}
	for _, g := range gold {
		if chosen[g] {
			continue
		}
		lt := LostTable{Table: g}
		c := cand[g]
		switch {
		case c == nil:
			lt.Reason = LostNotCandidate
		case !selected[g]:
			lt.Reason = LostBelowThreshold
		case res.Abstained:
			lt.Reason = LostAbstained
		default:
			lt.Reason = LostByExpansion
		}
		if c != nil {
			m := c.Margin
			lt.Rank, lt.Margin = c.Rank, &m
		}
		rec.Lost = append(rec.Lost, lt)
	}
	s := ScoreSet(rec.Chosen, gold)
	rec.Precision, rec.Recall, rec.F1, rec.Complete = s.Precision, s.Recall, s.F1, s.Complete
	return rec
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

func setOf(s []string) map[string]bool {
	m := make(map[string]bool, len(s))
	for _, v := range s {
		m[v] = true
	}
	return m
}

// round4 rounds for the file; JSON has no NaN or infinity, so those
// (a degenerate score) are written as 0 and counted in NonFinite.
func round4(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return math.Round(x*1e4) / 1e4
}
