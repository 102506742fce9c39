package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/atriumdb/atrium/retriever/vocab"
	"github.com/atriumdb/atrium/retriever/vocab/mine"
)

// measurer holds the inputs of the held-out experiments.
type measurer struct {
	morphGz, relsGz []byte
	wnLex           *vocab.Lexicon
	known           func(string) bool
	synQs           []synQuestion
	dbs             []spiderDB
	train           map[string]bool
}

// lexicon builds a Lexicon for fold f: learned pairs mined from the other
// folds only, WordNet relations if wordnet, with weights w (nil: default).
func (m *measurer) lexicon(f int, wordnet, learned bool, w *vocab.Weights) (*vocab.Lexicon, int, error) {
	src := vocab.Sources{Morph: bytes.NewReader(m.morphGz), Weights: w, Abbrev: strings.NewReader(m.abbrev())}
	n := 0
	if learned {
		pairs := mine.Pairs(m.wnLex, m.synQs, func(db string) bool { return fold(db) != f })
		var lw strings.Builder
		if err := mine.WriteTSV(&lw, pairs); err != nil {
			return nil, 0, err
		}
		src.Learned = strings.NewReader(lw.String())
		n = len(pairs)
	}
	if wordnet {
		src.WordNet = bytes.NewReader(m.relsGz)
	}
	lx, err := vocab.Parse(src)
	return lx, n, err
}

// abbrev is the abbreviation list mined from the training databases (all of
// them: schemas, not questions, so no question leaks).
func (m *measurer) abbrev() string {
	var ab strings.Builder
	writeAbbrev(&ab, mineAbbrev(m.wnLex, m.known, m.dbs, m.train))
	return ab.String()
}

// report prints the figures of fold f with the default weights.
func (m *measurer) report(w io.Writer, f int) error {
	exact, _, err := m.lexicon(f, false, false, nil)
	if err != nil {
		return err
	}
	wn, _, err := m.lexicon(f, true, false, nil)
	if err != nil {
		return err
	}
	learned, npairs, err := m.lexicon(f, false, true, nil)
	if err != nil {
		return err
	}
	both, _, err := m.lexicon(f, true, true, nil)
	if err != nil {
		return err
	}
	nHeld := 0
	for db := range m.train {
		if fold(db) == f {
			nHeld++
		}
	}
	fmt.Fprintf(w, "held-out training databases (fold %d): %d of %d; learned pairs mined from the rest: %d\n\n", f, nHeld, len(m.train), npairs)
	measure(w, []namedLexicon{{"WordNet only", wn}, {"learned only", learned}, {"WordNet + learned", both}}, m.synQs, m.dbs, f)
	fmt.Fprint(w, "\ntable retrieval on the pooled held-out databases (idf-weighted word matches; exact = no expansions):\n\n")
	measureRetrieval(w, []namedLexicon{{"exact only", exact}, {"WordNet only", wn}, {"learned only", learned}, {"WordNet + learned", both}}, m.synQs, m.dbs, f)
	fmt.Fprint(w, "\nmost frequent misses (WordNet + learned): ")
	missed(w, both, m.synQs, 40, f)
	return nil
}

// tune searches the weights coordinate by coordinate on fold 1, maximising
// the mean of the Spider-Syn and Spider MRR of the table-retrieval
// experiment, and prints each improvement.
func (m *measurer) tune(w io.Writer) error {
	const f = 1
	best := vocab.DefaultWeights()
	score := func(wt vocab.Weights) (float64, error) {
		lx, _, err := m.lexicon(f, true, true, &wt)
		if err != nil {
			return 0, err
		}
		tables := pool(lx, m.dbs, func(db string) bool { return fold(db) == f })
		s := retrieval(lx, tables, m.synQs, true, f)
		o := retrieval(lx, tables, m.synQs, false, f)
		return (s.mrr + o.mrr) / 2, nil
	}
	bestScore, err := score(best)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "default: %.4f %+v\n", bestScore, best)
	params := []struct {
		name   string
		field  func(*vocab.Weights) *float64
		values []float64
	}{
		{"Synonym", func(x *vocab.Weights) *float64 { return &x.Synonym }, []float64{0.3, 0.45, 0.6, 0.75}},
		{"Compound", func(x *vocab.Weights) *float64 { return &x.Compound }, []float64{0, 0.2, 0.45, 0.6}},
		{"Derivation", func(x *vocab.Weights) *float64 { return &x.Derivation }, []float64{0, 0.25, 0.5, 0.7}},
		{"Attribute", func(x *vocab.Weights) *float64 { return &x.Attribute }, []float64{0, 0.25, 0.45, 0.6}},
		{"Hypernym", func(x *vocab.Weights) *float64 { return &x.Hypernym }, []float64{0, 0.15, 0.35, 0.5}},
		{"Hypernym2", func(x *vocab.Weights) *float64 { return &x.Hypernym2 }, []float64{0, 0.1, 0.25, 0.4}},
		{"Hyponym", func(x *vocab.Weights) *float64 { return &x.Hyponym }, []float64{0, 0.15, 0.3, 0.45}},
		{"RankDecay", func(x *vocab.Weights) *float64 { return &x.RankDecay }, []float64{0, 0.25, 0.5, 1}},
		{"LearnedBase", func(x *vocab.Weights) *float64 { return &x.LearnedBase }, []float64{0.3, 0.45, 0.6, 0.75}},
		{"LearnedShare", func(x *vocab.Weights) *float64 { return &x.LearnedShare }, []float64{0, 0.2, 0.4}},
		{"LearnedMax", func(x *vocab.Weights) *float64 { return &x.LearnedMax }, []float64{0.6, 0.75, 0.85, 0.95}},
		{"Abbreviation", func(x *vocab.Weights) *float64 { return &x.Abbreviation }, []float64{0, 0.7, 1}},
	}
	for _, p := range params {
		for _, v := range p.values {
			cand := best
			if *p.field(&cand) == v {
				continue
			}
			*p.field(&cand) = v
			s, err := score(cand)
			if err != nil {
				return err
			}
			if s > bestScore+1e-4 {
				best, bestScore = cand, s
				fmt.Fprintf(w, "%s=%.2f: %.4f\n", p.name, v, s)
			}
		}
	}
	fmt.Fprintf(w, "best: %.4f %+v\n", bestScore, best)
	return nil
}
