package retriever

import (
	"math"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/atriumdb/atrium/internal/ident"
	"github.com/atriumdb/atrium/retriever/vocab"
)

// Query is a question prepared for scoring: analysed once, shared by every
// window scored for it. Read-only once built.
type Query struct {
	Text      string
	Embedding []float32

	all     analyzed // every word, stopwords kept (table names like has_pet)
	content analyzed // stopwords and relative time expressions dropped: what the question asks about
	// terms are the words the lexical and value searches look for: every
	// word but those of relative time expressions (see relativeTime).
	terms []string
	// literals are the addresses and codes the question holds
	// (valueLiterals): the value search asks for each whole.
	literals []string
	words    map[string]bool
	g        *graph
	// exp maps a content word's stem to the stems the vocabulary expands
	// it to, with their weights (below 1); see setExpansions.
	exp map[string]map[string]float64
	// emb are the lexicon's word vectors (nil: none) and softQ the
	// question's distinct content words softMatch compares; see softMatch.
	emb   *vocab.Embeddings
	softQ []softWord
}

// setExpansions records the vocabulary's expansions of q's content words
// (the same terms questionTerms adds to the lexical query).
func (q *Query) setExpansions(lx *vocab.Lexicon, weight float64) {
	q.exp = map[string]map[string]float64{}
	if lx != nil {
		q.emb = lx.Embeddings()
		q.softQ = softQuestionWords(q)
	}
	if lx == nil || weight <= 0 {
		return
	}
	for _, w := range q.content.words {
		if isNumber(w) {
			continue
		}
		s := stem(w)
		m := q.exp[s]
		if m == nil {
			m = map[string]float64{}
			q.exp[s] = m
		}
		if l := lx.Lemma(w); l != "" && stem(l) != s {
			m[stem(l)] = 1
		}
		for _, e := range lx.Expand(w) {
			for _, part := range ident.Split(e.Term) {
				ps := stem(part)
				if ps != s && !stopwords[ps] && weight*e.Weight > m[ps] {
					m[ps] = weight * e.Weight
				}
			}
		}
	}
}

// expMatch is how well question stem s matches a set of schema stems
// through the vocabulary, not literally: the best of the question word's
// expansions found among the stems, and the schema-side identifier
// expansions (cust → customer) that equal the word. 0 when only a literal
// match (or none) exists.
func (q *Query) expMatch(s string, exact map[string]bool, schemaExp map[string]float64) float64 {
	best := schemaExp[s]
	qe := q.exp[s]
	if len(qe) <= len(exact)+len(schemaExp) {
		for e, w := range qe {
			if exact[e] {
				best = max(best, w)
			} else if v := schemaExp[e]; v > 0 {
				best = max(best, w*v)
			}
		}
		return best
	}
	// The same maximum, walked from the table's side: a word's WordNet
	// expansions run to hundreds of stems, a table's to a few dozen, and
	// this runs for every question word against every candidate.
	for e, in := range exact {
		if w, ok := qe[e]; ok && in {
			best = max(best, w)
		}
	}
	for e, v := range schemaExp {
		if v > 0 && !exact[e] {
			if w, ok := qe[e]; ok {
				best = max(best, w*v)
			}
		}
	}
	return best
}

// NewQuery analyses a question. g may be nil (no join features).
func newQuery(text string, emb []float32, g *graph) *Query {
	q := &Query{Text: text, Embedding: emb, g: g}
	// An address or a code is one value, found whole by the value search,
	// and an e-mail address's fragments ("amir", "bakker", "710",
	// "webpost", "example") are no words of the question (see
	// emailsAsWord).
	q.literals = valueLiterals(text)
	analysed := text
	if len(q.literals) > 0 {
		analysed = emailsAsWord(text)
	}
	words := ident.Split(analysed)
	skip := relativeTime(words)
	q.all = analyzeWords(words, false, nil)
	q.content = analyzeWords(words, true, skip)
	q.words = map[string]bool{}
	for _, w := range q.all.words {
		q.words[w] = true
	}
	for i, w := range words {
		if !skip[i] {
			q.terms = append(q.terms, w)
		}
	}
	return q
}

// Candidate is one table proposed by the hybrid stage, with the evidence the
// scorers use.
type Candidate struct {
	Table *TableInfo
	// Rank is the 1-based position in the hybrid ranking.
	Rank int
	// LexRaw is ts_rank_cd over the weighted tsvector; SemRaw the cosine
	// similarity to the question embedding (0 without an embedding).
	LexRaw, SemRaw float64
	// SLex, SSem are the min-max normalised scores (value hits included in
	// SLex); S = α·SLex + (1−α)·SSem.
	SLex, SSem, S float64
	// Values are value-index entries that share words with the question.
	Values []ValueHit

	valFull, valPart float64
	// wordCos is the cosine of the question's and the table's mean word
	// vectors (the word-vector leg's, wordleg.go), when wordCosOK: unlike
	// SemRaw under the builtin embedder it carries meaning, and unlike the
	// scorer's features it does not depend on the other candidates.
	wordCos   float64
	wordCosOK bool
	// schemaCov is the share of the question's content words that the
	// names of this table's schema-mates among all candidates cover;
	// schemaBest marks the schema(s) covering most.
	schemaCov, schemaBest float64
	// stats is statsFor(statsQ, Table), kept by schemaCoverage for the
	// windows that score this candidate next (a candidate sits in up to
	// two overlapping windows, and statsFor is a fifth of a question's
	// time). Written only while the list is built, before anything reads
	// it concurrently (training validates members in parallel); a
	// different query recomputes.
	stats  *pairStats
	statsQ *Query
	// List-level evidence weighted by how rare a question word is among
	// the candidates' names (idf over the list, so it means the same for
	// 80 tables or 100,000): the table's own share (idfCov, idfName for
	// its name alone), its schema's share and gap to the best schema, the
	// number of question words only this schema's tables match (schemaUniq,
	// log1p) and whether that is the most, and whether the schema's own
	// name is mentioned.
	idfCov, idfName, schemaIdf, schemaIdfGap, schemaUniq, schemaUniqBest, schemaNamed float64
	// A greedy cover of the question's words by each schema's tables (most
	// idf weight first): coverGain is the share this table added when
	// picked (0 if it added nothing), coverFirst marks the schema's first
	// pick. A second table that adds words the first lacks is what a
	// multi-table question looks like.
	coverGain, coverFirst float64
	// softName, softQName, softQCol are softMatch's graded name and
	// column matches through word vectors.
	softName, softQName, softQCol float64
}

// ValueHit is a sampled column value that the question mentions.
type ValueHit struct {
	Column string
	Value  string
	// Match is the fraction of the value's words found in the question.
	Match float64
}

// matchValue scores how much of a value the question contains: the fraction
// of the value's words (ws, ident.Split of the value) that appear in the
// question.
func matchValue(q *Query, ws []string) float64 {
	if len(ws) == 0 {
		return 0
	}
	hit := 0
	for _, w := range ws {
		if q.words[w] {
			hit++
		}
	}
	return float64(hit) / float64(len(ws))
}

// valueWordFilter says which of a question's words can be evidence of a
// value hit; see informative.
type valueWordFilter struct {
	named    map[string]bool // stems of candidate tables' and schemas' names
	colNamed map[string]bool // stems of candidate tables' column names
	marked   map[string]bool // words the question quotes or capitalises (markedWords)
}

// informative reports whether question word w (lower case) in a value of
// table t says the question means that value. A value "of" or "2" says
// nothing, nor does an aggregate's name ("average salary" is no review
// titled "Average"; no Spider training or dev literal has one), nor a word
// that names a candidate table or schema: "support" in "Which customers
// opened support tickets" is the support schema, not hr.jobs' job title
// "Customer Support Agent". A word that names a column of another candidate
// is read as that column ("customers signed up for marketing e-mail" is
// shop.customers.marketing_opt_in, not the Marketing department) unless t
// names it too, in its name, a column or a comment ("open tickets":
// tickets.opened_at and tickets.status 'open') or the question marks it as
// a value: quoted, or capitalised inside the sentence ("Which employees
// work in Marketing?"). Of the 2,668
// Spider training literals a question mentions, 10 are mentioned only
// through words their own database's columns carry.
func (f valueWordFilter) informative(q *Query, t *TableInfo, w string) bool {
	if !q.words[w] || stopwords[w] || aggregateWords[w] || isNumber(w) || len(w) <= 1 {
		return false
	}
	st := stem(w)
	if f.named[st] {
		return false
	}
	if f.colNamed[st] && !f.marked[w] && !t.nameA.set[st] && !t.colStems[st] {
		return false
	}
	return true
}

// markedWords are the lower-cased words of text that it quotes or that are
// capitalised after its first word: how a question marks a value.
func markedWords(text string) map[string]bool {
	m := map[string]bool{}
	quote := rune(0)
	first := true
	for _, tok := range strings.FieldsFunc(text, func(r rune) bool { return unicode.IsSpace(r) }) {
		lead := []rune(tok)[0]
		if quote == 0 && (lead == '\'' || lead == '"') {
			quote = lead
		}
		word := strings.Trim(tok, "'\"?!.,;:()")
		if word != "" && (quote != 0 || (!first && unicode.IsUpper([]rune(word)[0]))) {
			for _, w := range ident.Split(word) {
				m[strings.ToLower(w)] = true
			}
		}
		if quote != 0 && strings.ContainsRune(strings.TrimLeft(tok, string(quote)), quote) {
			quote = 0
		}
		first = false
	}
	return m
}

// scoreValues fills a candidate's value evidence from its hits; hits with
// no informative word in common (valueWordFilter.informative) are dropped,
// and so are passing mentions: a value the question shares less than half
// the words of, none of them marked (markedWords). Sampled rows hold long
// titles and names, and one common word of them ("buyers" in the course
// "Negotiation Skills for Buyers", "sales" in the job "Head of Sales") is
// no sign the question means that row; of the 2,733 Spider training
// literals a question mentions, 4 share less than half their words with
// it, and 3 of those are quoted or capitalised.
//
// An address or code the question holds (valueLiterals) is one value: a
// sampled value that is the literal is a full match, and an e-mail
// address's words are no evidence for anything else. "tickets from
// amir.bakker710@webpost.example" names that customer's e-mail, not
// every employee called Amir.
func scoreValues(q *Query, c *Candidate, f valueWordFilter) {
	kept := c.Values[:0]
	for _, v := range c.Values {
		if slices.Contains(q.literals, strings.ToLower(v.Value)) {
			v.Match = 1
			kept = append(kept, v)
			continue
		}
		ws := ident.Split(v.Value)
		m := matchValue(q, ws)
		informative, marked := false, false
		for _, w := range ws {
			if f.informative(q, c.Table, w) {
				informative = true
				marked = marked || f.marked[w]
			}
		}
		if !informative || m == 0 || (m < 0.5 && !marked) {
			continue
		}
		v.Match = m
		kept = append(kept, v)
	}
	c.Values = kept
	c.valueEvidence()
}

// valueEvidence sets the scorer's two value features from the hits'
// matches: whether some hit is a full match, and the best match.
func (c *Candidate) valueEvidence() {
	c.valFull, c.valPart = 0, 0
	for _, v := range c.Values {
		if v.Match >= 1 {
			c.valFull = 1
		}
		c.valPart = max(c.valPart, v.Match)
	}
}

// sharedValueMin is how many candidate tables must hold a value before
// shareValues discounts it.
const sharedValueMin = 3

// shareValues discounts value hits that many candidates share. A value
// that k >= sharedValueMin candidate tables hold ("EUR" in every currency
// column, a city in every address) says less about which table is meant
// than one a single table holds, as a word every document carries does in
// BM25; each such hit counts at 2/k of its match. Two holders are left
// alone: a key and the foreign key that references it share their values.
func shareValues(cands []*Candidate) {
	holders := map[string]int{}
	for _, c := range cands {
		seen := map[string]bool{}
		for _, v := range c.Values {
			k := strings.ToLower(v.Value)
			if !seen[k] {
				seen[k] = true
				holders[k]++
			}
		}
	}
	for _, c := range cands {
		shared := false
		for i, v := range c.Values {
			if k := holders[strings.ToLower(v.Value)]; k >= sharedValueMin {
				c.Values[i].Match = v.Match * 2 / float64(k)
				shared = true
			}
		}
		if shared {
			c.valueEvidence()
		}
	}
}

// aggregateWords name what a question computes, not what a column holds.
var aggregateWords = map[string]bool{
	"average": true, "avg": true, "mean": true, "median": true, "sum": true,
	"maximum": true, "minimum": true, "max": true, "min": true,
}

// Feature vector sizes. Changing either (or the meaning of a slot) requires
// retraining: the weights file records both and the loader checks them.
const (
	numPairFeatures   = 40
	numThreshFeatures = 14
	// The last three threshold slots are filled by the scorer from the
	// window's table logits (max, second, mean): like ATR's threshold token,
	// which attends to the table tokens, the threshold sees the tables'
	// scores. Training treats them as constants (no gradient through them).
	threshLogitSlot = 10
)

// pairStats are the per-table quantities window features are built from.
type pairStats struct {
	nameCov, qNameCov, qColCov, comCov float64
	// qNameExp and qColExp: the share of the question's content words the
	// name / column names match only through the vocabulary, weighted.
	qNameExp, qColExp float64
	colHits           int
	covered           map[string]bool
}

// statsOf is statsFor(q, c.Table), from schemaCoverage's copy when it was
// made for q.
func (c *Candidate) statsOf(q *Query) pairStats {
	if c.stats != nil && c.statsQ == q {
		return *c.stats
	}
	return statsFor(q, c.Table)
}

func statsFor(q *Query, t *TableInfo) pairStats {
	var st pairStats
	st.covered = map[string]bool{}
	if n := len(t.nameA.stems); n > 0 {
		hit := 0
		for _, s := range t.nameA.stems {
			if q.all.set[s] {
				hit++
			}
		}
		st.nameCov = float64(hit) / float64(n)
	}
	nc := 0
	nameHit, colHit, comHit := 0, 0, 0
	for s := range q.content.set {
		if genericWords[s] {
			continue
		}
		nc++
		if t.nameA.set[s] {
			nameHit++
			st.covered[s] = true
		}
		if t.colStems[s] {
			colHit++
			st.covered[s] = true
		}
		if t.comA.set[s] {
			comHit++
		}
		if !t.nameA.set[s] {
			st.qNameExp += q.expMatch(s, t.nameA.set, t.nameExp)
		}
		if !t.colStems[s] {
			st.qColExp += q.expMatch(s, t.colStems, t.colExp)
		}
	}
	if nc > 0 {
		st.qNameExp /= float64(nc)
		st.qColExp /= float64(nc)
		st.qNameCov = float64(nameHit) / float64(nc)
		st.qColCov = float64(colHit) / float64(nc)
		st.comCov = float64(comHit) / float64(nc)
	}
	st.colHits = colHit
	return st
}

// windowFeatures computes the lite scorer's inputs for one window: a feature
// row per table and one row for the threshold. It is the single definition
// of the features, used by inference and by training alike.
func windowFeatures(q *Query, win []*Candidate) (pair [][]float64, thr []float64) {
	n := len(win)
	stats := make([]pairStats, n)
	maxS, sumS, maxCov, maxName, maxValFull, maxQCol := 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
	nameAll := 0
	top := 0
	for i, c := range win {
		stats[i] = c.statsOf(q)
		if c.S > win[top].S {
			top = i
		}
		sumS += c.S
		cov := stats[i].qNameCov + stats[i].qColCov
		maxCov = math.Max(maxCov, cov)
		maxName = math.Max(maxName, stats[i].nameCov)
		maxValFull = math.Max(maxValFull, c.valFull)
		maxQCol = math.Max(maxQCol, stats[i].qColCov)
		if stats[i].nameCov >= 1 {
			nameAll++
		}
	}
	topSchema := ""
	if n > 0 {
		topSchema = q.group(win[top].Table)
		maxS = win[top].S
	}
	schemaMass := map[string]float64{}
	winCov := map[string]map[string]bool{}
	maxSchemaCov := 0.0
	for i, c := range win {
		schemaMass[q.group(c.Table)] += c.S
		m := winCov[q.group(c.Table)]
		if m == nil {
			m = map[string]bool{}
			winCov[q.group(c.Table)] = m
		}
		for s := range stats[i].covered {
			m[s] = true
		}
		maxSchemaCov = math.Max(maxSchemaCov, c.schemaCov)
	}
	nContent := 0
	for s := range q.content.set {
		if !genericWords[s] {
			nContent++
		}
	}
	pair = make([][]float64, n)
	for i, c := range win {
		st := stats[i]
		f := make([]float64, numPairFeatures)
		f[0] = c.S
		f[1] = c.SLex
		f[2] = c.SSem
		f[3] = 1 / math.Log2(float64(c.Rank)+1)
		f[4] = st.nameCov
		if st.nameCov >= 1 {
			f[5] = 1
		}
		f[6] = st.qNameCov
		f[7] = math.Log1p(float64(st.colHits))
		f[8] = st.qColCov
		f[9] = st.comCov
		f[10] = c.valFull
		f[11] = c.valPart
		f[12] = math.Log1p(float64(len(c.Values)))
		deg, strong, namedNeighbours := 0, 0.0, 0
		if q.g != nil {
			for j, o := range win {
				if j == i || q.g.edge(c.Table.ID, o.Table.ID) == nil {
					continue
				}
				deg++
				strong = math.Max(strong, stats[j].nameCov)
				if stats[j].nameCov > 0 || stats[j].qColCov > 0 {
					namedNeighbours++
				}
			}
		}
		f[13] = math.Log1p(float64(deg))
		f[14] = strong
		f[15] = c.S - maxS
		f[16] = st.qNameCov + st.qColCov - maxCov
		if nContent > 0 {
			uniq := 0
			for s := range st.covered {
				alone := true
				for j := range win {
					if j != i && stats[j].covered[s] && q.group(win[j].Table) == q.group(c.Table) {
						alone = false
						break
					}
				}
				if alone {
					uniq++
				}
			}
			f[17] = float64(uniq) / float64(nContent)
		}
		if namedNeighbours >= 2 {
			f[18] = 1
		}
		f[19] = math.Log1p(float64(len(c.Table.Columns)))
		if q.group(c.Table) == topSchema {
			f[20] = 1
		}
		if sumS > 0 {
			f[21] = schemaMass[q.group(c.Table)] / sumS
		}
		f[22] = c.schemaCov
		f[23] = c.schemaBest
		if nContent > 0 {
			f[24] = float64(len(winCov[q.group(c.Table)])) / float64(nContent)
		}
		f[25] = c.idfCov
		f[26] = c.idfName
		f[27] = c.schemaIdf
		f[28] = c.schemaIdfGap
		f[29] = c.schemaUniq
		f[30] = c.schemaUniqBest
		f[31] = c.schemaNamed
		f[32] = c.coverGain
		f[33] = c.coverFirst
		f[34] = st.qNameExp
		f[35] = st.qColExp
		// The BM25F score itself, not only its min-max share: it has an
		// absolute meaning (idf-weighted matches) across catalogs.
		f[36] = math.Log1p(c.LexRaw)
		f[37] = c.softName
		f[38] = c.softQName
		f[39] = c.softQCol
		pair[i] = f
	}
	thr = make([]float64, numThreshFeatures)
	thr[0] = 1
	thr[1] = math.Log1p(float64(nContent))
	thr[2] = maxS
	thr[3] = maxName
	thr[4] = math.Log1p(float64(nameAll))
	thr[5] = maxValFull
	if n > 0 {
		thr[6] = sumS / float64(n)
	}
	thr[7] = maxQCol
	thr[8] = math.Log1p(float64(n))
	thr[9] = maxSchemaCov
	// Slots 10–12: the window's logits (setLogitStats).
	cover := 0
	for _, c := range win {
		if c.coverGain > 0 && c.schemaIdfGap == 0 {
			cover++
		}
	}
	thr[13] = math.Log1p(float64(cover))
	return pair, thr
}

// setLogitStats fills the threshold's logit slots.
func setLogitStats(thr, logits []float64) {
	if len(logits) == 0 {
		thr[threshLogitSlot], thr[threshLogitSlot+1], thr[threshLogitSlot+2] = 0, 0, 0
		return
	}
	first, second, sum := math.Inf(-1), math.Inf(-1), 0.0
	for _, l := range logits {
		sum += l
		if l > first {
			first, second = l, first
		} else if l > second {
			second = l
		}
	}
	if math.IsInf(second, -1) {
		second = first
	}
	thr[threshLogitSlot], thr[threshLogitSlot+1], thr[threshLogitSlot+2] = first, second, sum/float64(len(logits))
}

// schemaCoverage fills schemaCov and schemaBest over a candidate list.
func schemaCoverage(q *Query, cands []*Candidate) {
	nContent := 0
	for s := range q.content.set {
		if !genericWords[s] {
			nContent++
		}
	}
	if nContent == 0 {
		return
	}
	cov := map[string]map[string]bool{}
	for _, c := range cands {
		m := cov[q.group(c.Table)]
		if m == nil {
			m = map[string]bool{}
			cov[q.group(c.Table)] = m
		}
		st := statsFor(q, c.Table)
		c.stats, c.statsQ = &st, q
		for s := range st.covered {
			m[s] = true
		}
	}
	best := 0
	for _, m := range cov {
		best = max(best, len(m))
	}
	for _, c := range cands {
		c.softName, c.softQName, c.softQCol = softMatch(q, c.Table)
		k := len(cov[q.group(c.Table)])
		c.schemaCov = float64(k) / float64(nContent)
		c.schemaBest = 0
		if k == best && best > 0 {
			c.schemaBest = 1
		}
	}
	listIDF(q, cands)
}

// ownStems are the stems a table's own name and its non-key columns carry,
// and those of the comments documenting it: a column named like a
// reference (product_id, dept_id) names another table, and counting it
// would let a junction table "cover" the tables it joins. (Comments are
// taken whole: a documented schema's comments on such columns did not hurt
// where measured, docs/retrieval.md step 13.)
func ownStems(t *TableInfo) map[string]bool {
	if t.own != nil {
		return t.own
	}
	return buildOwnStems(t)
}

// buildOwnStems computes ownStems; prepare keeps its result, as retrieval
// asks for it per candidate and query.
func buildOwnStems(t *TableInfo) map[string]bool {
	own := map[string]bool{}
	for s := range t.nameA.set {
		own[s] = true
	}
	for _, a := range t.colA {
		if n := len(a.words); n > 1 && (a.words[n-1] == "id" || a.words[n-1] == "key") {
			continue
		}
		for s := range a.set {
			own[s] = true
		}
	}
	for _, s := range t.comA.stems {
		own[s] = true
	}
	return own
}

// minOwnExpansion is the least weight at which an identifier token's
// expansion counts as a word the table names, for the abstention coverage:
// the abbreviation list (0.7-0.9) and segmented run-together tokens (0.9)
// pass, weaker guesses do not.
const minOwnExpansion = 0.5

// buildOwnExpansions collects the stems the table's name and non-key
// column tokens expand to at minOwnExpansion or more, for ownStems' words
// spelled as identifiers (cust_name names "customer"). Aggregate words are
// left out: Max_Price names a price, not "maximum", and counting it would
// let a column prefix cover what a question computes. Key columns are left
// out for ownStems' reason, and so are the primary key and the columns
// whose run-together tokens read as one (custid → customer id, uid → user
// id): a key's expansion names the table it identifies, which for a
// reference is another table and for the primary key a guess at best
// (flight_2's airlines.uid is no user).
func buildOwnExpansions(t *TableInfo, expand func(string) []weightedTerm) map[string]bool {
	if expand == nil {
		return nil
	}
	// Most tables' words are plain and expand to nothing; a catalog of
	// 100,000 tables should not hold as many empty maps.
	var out map[string]bool
	strong := func(words []string) []weightedTerm {
		var es []weightedTerm
		for _, w := range words {
			for _, e := range expand(w) {
				if e.weight >= minOwnExpansion {
					es = append(es, e)
				}
			}
		}
		return es
	}
	add := func(es []weightedTerm) {
		for _, e := range es {
			if aggregateWords[e.term] {
				continue
			}
			if out == nil {
				out = map[string]bool{}
			}
			out[stem(e.term)] = true
		}
	}
	add(strong(t.nameA.words))
	for i, a := range t.colA {
		if n := len(a.words); t.Columns[i].PrimaryKey || (n > 1 && (a.words[n-1] == "id" || a.words[n-1] == "key")) {
			continue
		}
		es := strong(a.words)
		if slices.ContainsFunc(es, func(e weightedTerm) bool { return e.term == "id" || e.term == "key" }) {
			continue
		}
		add(es)
	}
	return out
}

// listIDF fills the idf-weighted list-level evidence of each candidate.
func listIDF(q *Query, cands []*Candidate) {
	n := float64(len(cands))
	if n == 0 {
		return
	}
	own := make([]map[string]bool, len(cands))
	for i, c := range cands {
		own[i] = ownStems(c.Table)
	}
	// Which candidates' names (table or column) contain each content stem.
	var terms []string
	for s := range q.content.set {
		if !genericWords[s] {
			terms = append(terms, s)
		}
	}
	sort.Strings(terms)
	df := make([]float64, len(terms))
	schemasOf := make([]map[string]bool, len(terms))
	for i, s := range terms {
		schemasOf[i] = map[string]bool{}
		for _, c := range cands {
			if c.Table.nameA.set[s] || c.Table.colStems[s] {
				df[i]++
				schemasOf[i][q.group(c.Table)] = true
			}
		}
	}
	idf := make([]float64, len(terms))
	total := 0.0
	for i := range terms {
		if df[i] > 0 {
			idf[i] = math.Log(1 + n/df[i])
			total += idf[i]
		}
	}
	schemaW := map[string]float64{}
	schemaU := map[string]float64{}
	for i := range terms {
		for sc := range schemasOf[i] {
			schemaW[sc] += idf[i]
			if len(schemasOf[i]) == 1 {
				schemaU[sc]++
			}
		}
	}
	bestW, bestU := 0.0, 0.0
	for _, w := range schemaW {
		bestW = max(bestW, w)
	}
	for _, u := range schemaU {
		bestU = max(bestU, u)
	}
	for _, c := range cands {
		c.idfCov, c.idfName = 0, 0
		if total > 0 {
			for i, s := range terms {
				if c.Table.nameA.set[s] {
					c.idfName += idf[i]
				}
				if c.Table.nameA.set[s] || c.Table.colStems[s] {
					c.idfCov += idf[i]
				}
			}
			c.idfCov /= total
			c.idfName /= total
			c.schemaIdf = schemaW[q.group(c.Table)] / total
			c.schemaIdfGap = (schemaW[q.group(c.Table)] - bestW) / total
		}
		u := schemaU[q.group(c.Table)]
		c.schemaUniq = math.Log1p(u)
		c.schemaUniqBest = 0
		if u > 0 && u == bestU {
			c.schemaUniqBest = 1
		}
		c.coverGain, c.coverFirst = 0, 0
		c.schemaNamed = 0
		for _, w := range ident.Split(c.Table.Schema) {
			if len(w) > 2 && !isNumber(w) && q.content.set[stem(w)] {
				c.schemaNamed = 1
				break
			}
		}
	}
	if total == 0 {
		return
	}
	// Greedy cover per schema, candidates in list order (ties keep rank).
	bySchema := map[string][]int{}
	var order []string
	for i, c := range cands {
		if bySchema[q.group(c.Table)] == nil {
			order = append(order, q.group(c.Table))
		}
		bySchema[q.group(c.Table)] = append(bySchema[q.group(c.Table)], i)
	}
	for _, sc := range order {
		covered := make([]bool, len(terms))
		first := true
		for {
			var best *Candidate
			bestIdx := -1
			bestGain := 0.0
			for _, ci := range bySchema[sc] {
				c := cands[ci]
				if c.coverGain > 0 {
					continue
				}
				g := 0.0
				for i, s := range terms {
					if !covered[i] && own[ci][s] {
						g += idf[i]
					}
				}
				if g > bestGain+1e-12 {
					best, bestIdx, bestGain = c, ci, g
				}
			}
			if best == nil {
				break
			}
			best.coverGain = bestGain / total
			if first {
				best.coverFirst = 1
				first = false
			}
			for i, s := range terms {
				if own[bestIdx][s] {
					covered[i] = true
				}
			}
		}
	}
}

// reasonsFor names the evidence that made a candidate relevant, for people
// reading RETRIEVE output.
func reasonsFor(q *Query, c *Candidate) []string {
	var rs []string
	st := c.statsOf(q)
	if c.SLex >= 0.5 || st.nameCov > 0 || st.qColCov > 0 {
		rs = append(rs, "lexical")
	}
	if c.SSem >= 0.5 {
		rs = append(rs, "vector")
	}
	if len(c.Values) > 0 {
		rs = append(rs, "value")
	}
	return rs
}

func joinReasons(rs []string) string { return strings.Join(rs, ",") }

// group is the key the schema-coherence features group tables by: the
// table's schema, or the group of schemas that foreign keys connect
// (graph.schemaGroup). A Spider database is one schema with no foreign key
// to another, so the two agree on the training data; in a database whose
// schemas reference each other (support.tickets → shop.customers) a
// question's tables may span schemas and are not penalised for it.
func (q *Query) group(t *TableInfo) string {
	if q.g != nil {
		if g, ok := q.g.schemaGroup[t.Schema]; ok {
			return g
		}
	}
	return t.Schema
}

// softMatch grades how well a table's words and the question's meet through
// word vectors, where the features above see only literal matches and the
// vocabulary's relations: "vocalists" is near singer, "curriculum" near
// course, though WordNet relates neither pair. A literal (stem) match counts
// 1, otherwise the cosine of the two words' vectors (0 below 0). softName is
// the mean over the table name's words of their best match in the question;
// softQName and softQCol the mean over the question's content words of
// their best match among the name's words and the non-key columns' words.
// All three are 0 without vectors.
func softMatch(q *Query, t *TableInfo) (softName, softQName, softQCol float64) {
	qw := q.softQ
	if q.emb == nil || len(qw) == 0 {
		return 0, 0, 0
	}
	// Positions resolved at catalog load are valid only for the
	// vectors they were resolved in.
	byIndex := t.softEmb == q.emb
	sim := func(a, b softWord) float64 {
		if a.s == b.s {
			return 1
		}
		var v float64
		if byIndex {
			v, _ = q.emb.CosineAt(a.v, b.v)
		} else {
			v, _ = q.emb.Cosine(a.w, b.w)
		}
		return max(v, 0)
	}
	name, cols := t.softName, t.softCols
	best := func(a softWord, set []softWord) float64 {
		b := 0.0
		for _, x := range set {
			b = max(b, sim(a, x))
		}
		return b
	}
	for _, n := range name {
		softName += best(n, qw)
	}
	if len(name) > 0 {
		softName /= float64(len(name))
	}
	for _, w := range qw {
		softQName += best(w, name)
		softQCol += best(w, cols)
	}
	return softName, softQName / float64(len(qw)), softQCol / float64(len(qw))
}

// softWord is a word softMatch compares, with its stem (a literal stem
// match counts 1 without a vector lookup) and its position in the word
// vectors (-1: none, or not resolved).
type softWord struct {
	w, s string
	v    int32
}

// softQuestionWords are q's distinct content words, generic identifier
// words and numbers left out: the question side of softMatch, built once
// per query rather than per candidate (q.emb set first).
func softQuestionWords(q *Query) []softWord {
	var qw []softWord
	seen := map[string]bool{}
	for i, s := range q.content.stems {
		w := q.content.words[i]
		if genericWords[s] || seen[s] || isNumber(w) {
			continue
		}
		seen[s] = true
		qw = append(qw, softWord{w, s, q.emb.Index(w)})
	}
	return qw
}

// softTableWords are the table side of softMatch: the name's words and
// the distinct words of its non-key columns (a last word "id" or "key"
// marks a key), generic identifier words left out. Built once per catalog
// load (TableInfo.prepare).
func softTableWords(name analyzed, cols []analyzed, emb *vocab.Embeddings) (nameW, colW []softWord) {
	for i, s := range name.stems {
		if !genericWords[s] {
			nameW = append(nameW, softWord{name.words[i], s, emb.Index(name.words[i])})
		}
	}
	seen := map[string]bool{}
	for _, a := range cols {
		if n := len(a.words); n > 1 && (a.words[n-1] == "id" || a.words[n-1] == "key") {
			continue
		}
		for i, s := range a.stems {
			if !genericWords[s] && !seen[s] {
				seen[s] = true
				colW = append(colW, softWord{a.words[i], s, emb.Index(a.words[i])})
			}
		}
	}
	return nameW, colW
}
