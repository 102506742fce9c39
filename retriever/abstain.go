package retriever

import (
	"fmt"
	"math"
	"strings"

	"github.com/atriumdb/atrium/retriever/vocab"
)

// Abstention defaults (Config.AbstainFloor, Config.AbstainCoverage), chosen
// on training-derived questions only: the most abstention on Spider train
// questions asked against 20 training databases without their own (and
// off-topic questions written for tuning) whose false abstention stays at
// most 0.03 (the goal for it) on the held-out databases of all seven
// cross-validation folds, in both wordings (strict vocabulary pairs, so a
// reworded question is as unbridged as a new user's). Answerable training
// questions alone understate it: the vocabulary was mined from them, so it
// covers their rewordings. See "Abstention" and steps 11 and 12 in
// docs/retrieval.md (step 26's margin under the goal went with words-v1,
// step 30). The floor is a logit of the shipped lite scorer: retraining
// the scorer changes its scale, so re-measure both with it.
const (
	DefaultAbstainFloor    = -1.50
	DefaultAbstainCoverage = 0.20
	// DefaultTopWhenEmpty is Config.TopWhenEmpty's default: off. It was
	// measured only beside step 38's candidate scorer, which dev vetoed.
	DefaultTopWhenEmpty = false
)

// AbstainEvidence is the optional absolute-evidence rule (off by
// default): the retriever also abstains when the selection names less than
// Coverage of the question's content words AND no selected table's
// embedding reaches Cosine against the question's. The lite scorer's
// logits are relative to the window, so neither of the shipped signals says
// "nothing here is about this question at all"; the raw cosine is absolute
// (it does not depend on the other candidates), and the conjunction spares
// a question that is worded unlike the schema but close in meaning, or
// named by the schema but embedded far from it. Measured in "Abstention"
// of docs/retrieval.md.
//
// With Word the cosine is the word-vector leg's (wordleg.go: the mean
// GloVe vectors of the question's and the table's words) instead of the
// embedder's, so the rule carries meaning under the builtin embedder too;
// a selection with no such vector is never judged far.
type AbstainEvidence struct {
	Coverage float64 `json:"coverage"`
	Cosine   float64 `json:"cosine"`
	Word     bool    `json:"word,omitempty"`
}

// abstention is the verdict on Algorithm 1's selection.
type abstention struct {
	best     float64 // best logit of the selection
	coverage float64 // share of the question's content words it names
	cosine   float64 // best raw question–table cosine of the selection
	wordCos  float64 // best word-vector cosine of the selection (1: none known)
	abstain  bool
	why      string // which rule abstained, for the user (Result.AbstainReason)
}

// abstain decides whether Algorithm 1's selection is too weak for any table
// to be chosen. Algorithm 1 never forces a table on its own (its threshold
// can outrank every table), but the lite scorer's threshold is calibrated
// on answerable questions and is relative to the window's best table, so
// an off-topic question still gets its least-bad tables. Two absolute
// signals tell "nothing answers" apart: the best table's logit, and how
// much of what the question asks about the selected tables name at all
// (names, columns, comments, value hits) — a question about the weather
// names nothing a sales schema holds, whatever the ranking.
func abstain(q *Query, atr *atrResult, floor, minCoverage, coverCosine float64, ev *AbstainEvidence) abstention {
	if atr.Selected == 0 || len(atr.Ranked) == 0 {
		// Algorithm 1 itself found nothing above its threshold.
		return abstention{best: math.Inf(-1), abstain: true, why: "no table scored above the retriever's threshold"}
	}
	sel := atr.Ranked[:atr.Selected]
	v := abstention{best: math.Inf(-1), cosine: math.Inf(-1), wordCos: math.Inf(-1), coverage: selectionCoverage(q, sel, coverCosine)}
	for _, s := range sel {
		v.best = max(v.best, s.Logit)
		v.cosine = max(v.cosine, s.SemRaw)
		if s.wordCosOK {
			v.wordCos = max(v.wordCos, s.wordCos)
		}
	}
	if math.IsInf(v.wordCos, -1) {
		v.wordCos = 1
	}
	evCos := v.cosine
	if ev != nil && ev.Word {
		evCos = v.wordCos
	}
	switch {
	case v.best < floor:
		v.abstain = true
		v.why = fmt.Sprintf("the best table scored %.2f, below the abstention floor %g", v.best, floor)
	case v.coverage < minCoverage:
		v.abstain = true
		v.why = fmt.Sprintf("the best tables name %.0f%% of the question's words, under the abstention coverage %.0f%%", 100*v.coverage, 100*minCoverage)
	case ev != nil && v.coverage < ev.Coverage && evCos < ev.Cosine:
		v.abstain = true
		v.why = "the best tables name few of the question's words and none is close to it in meaning"
	}
	return v
}

// selectionCoverage is the share of the question's content words (generic
// identifier words and bare numbers left out) that some selected table's
// name, non-key columns (as written or as their identifier tokens expand:
// cust_name carries "customer"), comment or matched values carry, directly or
// through the vocabulary bridge (a synonym, derivation or learned
// association of weight at least minBridgeWeight: "vocalists" is named by
// singer), or, when cosine > 0, whose word vector has at least that cosine
// with one of those words' ("campuses" and university, which WordNet does
// not relate). A question with no such word counts as fully covered: there
// is nothing to judge by.
func selectionCoverage(q *Query, sel []*Scored, cosine float64) float64 {
	if q == nil {
		return 1
	}
	own := map[string]bool{}
	for _, s := range sel {
		for st := range ownStems(s.Table) {
			own[st] = true
		}
		for st := range s.Table.ownExp {
			own[st] = true
		}
		for _, v := range s.Values {
			for _, st := range analyze(v.Value, true).stems {
				own[st] = true
			}
		}
	}
	lex := vocab.Default()
	emb := lex.Embeddings()
	var ownVec []int32 // own words' vector positions, resolved once
	if cosine > 0 {
		for st := range own {
			if i := emb.Index(st); i >= 0 {
				ownVec = append(ownVec, i)
			}
		}
	}
	n, total := 0, 0
	seen := map[string]bool{}
	for i, w := range q.content.words {
		st := q.content.stems[i]
		if seen[st] || genericWords[st] || strings.Trim(st, "0123456789.") == "" {
			continue
		}
		seen[st] = true
		total++
		if own[st] {
			n++
			continue
		}
		named := false
		for _, e := range lex.Expand(w) {
			if e.Weight < minBridgeWeight {
				break
			}
			if hit := analyze(e.Term, true); len(hit.stems) > 0 && allIn(hit.stems, own) {
				named = true
				break
			}
		}
		if !named && len(ownVec) > 0 {
			named = nearAny(emb, w, st, lex, ownVec, cosine)
		}
		if named {
			n++
		}
	}
	if total == 0 {
		return 1
	}
	return float64(n) / float64(total)
}

// minBridgeWeight is the least vocabulary-bridge weight that counts a
// question word as named (synonyms, derivations and learned pairs; not the
// looser hypernyms and hyponyms).
const minBridgeWeight = 0.4

// nearAny reports whether question word w has cosine at least min with
// one of the vectors at own, as itself or as its lemma ("campuses" is
// further from university than campus is), or by its stem when neither
// has a vector.
func nearAny(emb *vocab.Embeddings, w, st string, lex *vocab.Lexicon, own []int32, min float64) bool {
	forms := [2]int32{emb.Index(strings.ToLower(w)), emb.Index(lex.Lemma(w))}
	if forms[0] < 0 && forms[1] < 0 {
		forms[0] = emb.Index(st)
	}
	for _, i := range forms {
		if i < 0 {
			continue
		}
		for _, j := range own {
			if c, ok := emb.CosineAt(i, j); ok && c >= min {
				return true
			}
		}
	}
	return false
}

func allIn(stems []string, set map[string]bool) bool {
	for _, s := range stems {
		if !set[s] {
			return false
		}
	}
	return true
}
