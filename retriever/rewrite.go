package retriever

import (
	"sort"
	"strings"

	"github.com/atriumdb/atrium/internal/ident"
	"github.com/atriumdb/atrium/retriever/vocab"
)

// DefaultSchemaRewrite is Config.SchemaRewrite's default: a bridge of a
// WordNet synonym, derivation or hyponym or better (weights 0.6, 0.5, 0.3 at
// QuestionExpansion 0.5), a learned pair, or the first senses' direct
// hypernym. Chosen on the held-out Spider and Spider-Syn training
// databases (docs/retrieval.md, step 8), never on a dev set.
const DefaultSchemaRewrite = 0.15

// Rewrite is one question word the scorer saw as a schema word: the
// question said From, the candidates' names say To.
type Rewrite struct {
	From, To string
	Weight   float64 // the vocabulary bridge's weight (question expansion units)
}

// schemaWords maps the stems of the candidates' table and non-key column
// names to a word that carries them (the first met, candidates in rank
// order, so the choice is deterministic).
func schemaWords(cands []*Candidate) map[string]string {
	m := map[string]string{}
	add := func(a analyzed) {
		for i, s := range a.stems {
			if _, ok := m[s]; !ok {
				m[s] = a.words[i]
			}
		}
	}
	for _, c := range cands {
		add(c.Table.nameA)
		for _, a := range c.Table.colA {
			if n := len(a.words); n > 1 && (a.words[n-1] == "id" || a.words[n-1] == "key") {
				continue
			}
			add(a)
		}
	}
	return m
}

// rewriteToSchema says the question in the candidates' words. A content
// word that no candidate's name or columns carry, but whose vocabulary
// expansion does with a bridge weight of at least minWeight, is replaced by
// that schema word ("nation" by country, "puppies" by dog). The scorer's
// name-match features were learned mostly on questions that repeat the
// schema's words; its vocabulary features see a synonym as weak evidence,
// because most of the half-million WordNet relations never name a table.
// Among the candidates, an expansion that does name one is rarely a
// coincidence. The candidate list itself is not touched: it was found
// with every expansion already.
//
// It returns q itself when nothing is rewritten. Numbers, stopwords and
// relative time expressions are never rewritten; a word the schema already
// carries never is either, so a question in the schema's own words is
// scored exactly as before.
func rewriteToSchema(q *Query, cands []*Candidate, lx *vocab.Lexicon, expansion, minWeight float64) (*Query, []Rewrite) {
	if q == nil || len(q.exp) == 0 || minWeight <= 0 || minWeight > 1 {
		return q, nil
	}
	vocabWords := schemaWords(cands)
	words := ident.Split(q.Text)
	skip := relativeTime(words)
	var rws []Rewrite
	for i, w := range words {
		if skip[i] || stopwords[w] || isNumber(w) {
			continue
		}
		s := stem(w)
		if _, ok := vocabWords[s]; ok {
			continue
		}
		exps := q.exp[s]
		keys := make([]string, 0, len(exps))
		for e := range exps {
			keys = append(keys, e)
		}
		sort.Strings(keys)
		best, bw := "", 0.0
		for _, e := range keys {
			if _, ok := vocabWords[e]; ok && exps[e] > bw {
				best, bw = e, exps[e]
			}
		}
		if best == "" || bw < minWeight {
			continue
		}
		words[i] = vocabWords[best]
		rws = append(rws, Rewrite{From: w, To: words[i], Weight: bw})
	}
	if len(rws) == 0 {
		return q, nil
	}
	q2 := newQuery(strings.Join(words, " "), q.Embedding, q.g)
	q2.setExpansions(lx, expansion)
	// The text stays the user's: the ONNX scorer reads it, multi-hop
	// rewrites it, and the learning index matches examples on it.
	q2.Text = q.Text
	return q2, rws
}

// rewrittenTerms are the lexical query's terms with each rewrite's schema
// word counted as if the question had said it.
func rewrittenTerms(terms []queryTerm, rws []Rewrite) []queryTerm {
	out := append([]queryTerm(nil), terms...)
	for _, rw := range rws {
		st := stem(rw.To)
		found := false
		for i := range out {
			if out[i].stem == st {
				out[i].weight, found = 1, true
			}
		}
		if !found {
			out = append(out, queryTerm{stem: st, weight: 1})
		}
	}
	return out
}
