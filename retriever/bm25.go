package retriever

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/atriumdb/atrium/internal/ident"
	"github.com/atriumdb/atrium/retriever/vocab"
)

// The lexical list of the candidate stage is BM25F over four fields of each
// table, computed in process from an index built once per catalog version.
// PostgreSQL's ts_rank_cd has no inverse document frequency: "name", which
// nearly every table has, counted as much as "vocalist". BM25F weighs each
// question word by its rarity over the catalog and normalises by field
// length, so a table whose name carries the question's rare words outranks
// one that merely has many columns.

// Fields of the BM25F index.
const (
	fieldName    = iota // the table's name
	fieldColumns        // its column names
	fieldText           // table comment, purpose, column comments and descriptions
	fieldValues         // sampled column values
	numFields
)

// bm25Params are BM25F's constants: per-field weights and length
// normalisation, and k1. Chosen on Spider / Spider-Syn training questions
// (docs/retrieval.md), never on a dev set.
type bm25Params struct {
	weight [numFields]float64
	b      [numFields]float64
	k1     float64
}

var defaultBM25 = bm25Params{
	weight: [numFields]float64{3.0, 1.5, 1.0, 0.4},
	b:      [numFields]float64{0.5, 0.75, 0.75, 0.75},
	k1:     1.2,
}

// posting is one table's term frequencies of a term, per field, scaled by
// tfScale (index-time expansions such as abbreviations add fractional
// counts).
type posting struct {
	doc int32
	tf  [numFields]uint16
}

const tfScale = 16

// lexIndex is the BM25F index of one catalog version. Immutable.
type lexIndex struct {
	version  int64
	ids      []int64              // doc → table id
	lens     [][numFields]float32 // doc → field lengths in words
	avg      [numFields]float64   // mean field length
	postings map[string][]posting // stem → postings, in doc order
	docOf    map[int64]int32      // table id → doc
	params   bm25Params
	// words are the tables' word vectors for the word-vector leg
	// (wordleg.go); nil without the lexicon's vectors.
	words *wordVectors
}

// indexTerm is one word of a table as the index sees it: its stem and its
// count (below tfScale for an expansion).
type indexTerm struct {
	stem string
	tf   int
}

// tableTerms lists the index terms of a piece of text: identifier split,
// lower-cased, stemmed, plus the schema-side expansions of each token.
func tableTerms(s string, expand func(word string) []weightedTerm) []indexTerm {
	var out []indexTerm
	for _, w := range ident.Split(s) {
		out = append(out, indexTerm{stem: stem(w), tf: tfScale})
		if expand != nil {
			for _, e := range expand(w) {
				out = append(out, indexTerm{stem: stem(e.term), tf: max(1, int(math.Round(e.weight*tfScale)))})
			}
		}
	}
	return out
}

// weightedTerm is an expansion of a word with its weight in (0, 1).
type weightedTerm struct {
	term   string
	weight float64
	// part marks a word of the identifier token itself, which PostgreSQL
	// folded run together (customername → customer, name): the table's
	// analysis reads the token as these words.
	part bool
}

// lexIndexSQL reads what the index needs of every table in one pass.
const lexIndexSQL = `
SELECT t.id, t.table_name,
       coalesce(t.comment, '') || ' ' || coalesce(t.purpose, ''),
       coalesce(string_agg(c.column_name, ' ' ORDER BY c.position), ''),
       coalesce(string_agg(coalesce(c.comment, '') || ' ' || coalesce(c.description, ''), ' ' ORDER BY c.position), ''),
       coalesce(string_agg(array_to_string(c.sample_values[1:5], ' '), ' ' ORDER BY c.position), '')
FROM atrium.tables t LEFT JOIN atrium.columns c ON c.table_id = t.id
GROUP BY t.id
ORDER BY t.id`

// buildLexIndex reads the catalog and builds its BM25F index.
func buildLexIndex(ctx context.Context, db *pgxpool.Pool, version int64, expand func(string) []weightedTerm, emb *vocab.Embeddings) (*lexIndex, error) {
	rows, err := db.Query(ctx, lexIndexSQL)
	if err != nil {
		return nil, fmt.Errorf("build lexical index: %w", classifyCatalogErr(err))
	}
	defer rows.Close()
	b := newLexIndexBuilder(version, expand)
	b.withWordVectors(emb)
	for rows.Next() {
		var id int64
		var name, tcom, cols, ccom, vals string
		if err := rows.Scan(&id, &name, &tcom, &cols, &ccom, &vals); err != nil {
			return nil, fmt.Errorf("build lexical index: %w", err)
		}
		b.add(id, [numFields]string{name, cols, tcom + " " + ccom, vals})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("build lexical index: %w", classifyCatalogErr(err))
	}
	return b.done(), nil
}

type lexIndexBuilder struct {
	ix     *lexIndex
	expand func(string) []weightedTerm
	sum    [numFields]float64
	emb    *vocab.Embeddings
}

// withWordVectors makes the index also hold each table's word vector
// (emb nil: none). Call it before the first add.
func (b *lexIndexBuilder) withWordVectors(emb *vocab.Embeddings) {
	if emb == nil || emb.Dim() == 0 {
		return
	}
	b.emb = emb
	b.ix.words = &wordVectors{dim: emb.Dim()}
}

func newLexIndexBuilder(version int64, expand func(string) []weightedTerm) *lexIndexBuilder {
	return &lexIndexBuilder{
		ix:     &lexIndex{version: version, postings: map[string][]posting{}, docOf: map[int64]int32{}, params: defaultBM25},
		expand: expand,
	}
}

func (b *lexIndexBuilder) add(id int64, fields [numFields]string) {
	ix := b.ix
	doc := int32(len(ix.ids))
	ix.ids = append(ix.ids, id)
	ix.docOf[id] = doc
	if b.emb != nil {
		ix.words.add(tableWordVector(fields[fieldName], fields[fieldColumns], b.expand, b.emb))
	}
	var lens [numFields]float32
	tf := map[string]*[numFields]int{}
	for f, text := range fields {
		exp := b.expand
		if f == fieldValues || f == fieldText {
			exp = nil // expansions are for identifiers, not prose or data
		}
		for _, t := range tableTerms(text, exp) {
			if stopwords[t.stem] {
				continue
			}
			c := tf[t.stem]
			if c == nil {
				c = &[numFields]int{}
				tf[t.stem] = c
			}
			c[f] += t.tf
			if t.tf == tfScale {
				lens[f]++
			}
		}
	}
	for f := range lens {
		b.sum[f] += float64(lens[f])
	}
	ix.lens = append(ix.lens, lens)
	for term, c := range tf {
		var p posting
		p.doc = doc
		for f, v := range c {
			p.tf[f] = uint16(min(v, math.MaxUint16))
		}
		ix.postings[term] = append(ix.postings[term], p)
	}
}

func (b *lexIndexBuilder) done() *lexIndex {
	n := float64(max(len(b.ix.ids), 1))
	for f := range b.sum {
		b.ix.avg[f] = max(b.sum[f]/n, 1)
	}
	return b.ix
}

// queryTerm is one term of a question with its weight (1 for the
// question's own words, below 1 for expansions).
type queryTerm struct {
	stem   string
	weight float64
}

// score returns the BM25F score of every table matching a query term, as a
// dense slice by doc (nil when nothing matches).
func (ix *lexIndex) score(terms []queryTerm) []float32 {
	if len(ix.ids) == 0 {
		return nil
	}
	var out []float32
	n := float64(len(ix.ids))
	p := ix.params
	for _, qt := range terms {
		ps := ix.postings[qt.stem]
		if len(ps) == 0 {
			continue
		}
		if out == nil {
			out = make([]float32, len(ix.ids))
		}
		df := float64(len(ps))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for _, po := range ps {
			lens := &ix.lens[po.doc]
			tf := 0.0
			for f := range numFields {
				if po.tf[f] == 0 {
					continue
				}
				norm := 1 - p.b[f] + p.b[f]*float64(lens[f])/ix.avg[f]
				tf += p.weight[f] * float64(po.tf[f]) / tfScale / norm
			}
			out[po.doc] += float32(qt.weight * idf * tf / (p.k1 + tf))
		}
	}
	return out
}

// top returns the ids of the k best-scoring tables (score > 0), best first,
// ties by id.
func (ix *lexIndex) top(scores []float32, k int) []int64 {
	type hit struct {
		doc   int32
		score float32
	}
	var hits []hit
	for d, s := range scores {
		if s > 0 {
			hits = append(hits, hit{int32(d), s})
		}
	}
	slices.SortFunc(hits, func(a, b hit) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(ix.ids[a.doc], ix.ids[b.doc])
	})
	if len(hits) > k {
		hits = hits[:k]
	}
	out := make([]int64, len(hits))
	for i, h := range hits {
		out[i] = ix.ids[h.doc]
	}
	return out
}

// scoreOf is the BM25F score of table id in scores (0 when absent).
func (ix *lexIndex) scoreOf(scores []float32, id int64) float64 {
	if scores == nil {
		return 0
	}
	d, ok := ix.docOf[id]
	if !ok {
		return 0
	}
	return float64(scores[d])
}

// memoryBytes estimates the index's heap size (for the 100k-table
// benchmark and the log line at build).
func (ix *lexIndex) memoryBytes() int {
	n := len(ix.ids) * (8 + 16 + 24) // ids, lens, docOf entry (approx.)
	for t, ps := range ix.postings {
		n += len(t) + 48 + len(ps)*int(sizeofPosting)
	}
	if ix.words != nil {
		n += len(ix.words.vec) + len(ix.words.ok)
	}
	return n
}

const sizeofPosting = 4 + 2*numFields

// syncIndexTables is the largest catalog whose index is built while the
// question waits (about a second per 10,000 tables on a busy 2-core
// machine); larger catalogs build it in the background and meanwhile rank
// the lexical list with the previous version's index, or with ts_rank_cd in
// SQL when there is none.
const syncIndexTables = 20_000

// lexIndexCache holds the index of the latest catalog version built.
type lexIndexCache struct {
	mu       sync.Mutex // serialises builds
	cur      atomic.Pointer[lexIndex]
	expand   func(string) []weightedTerm
	emb      *vocab.Embeddings
	building atomic.Int64 // version being built in the background (0: none)
}

// get returns the index for version. On a catalog of more than
// syncIndexTables tables a missing index is built in the background and get
// returns the previous one (possibly nil) meanwhile.
func (c *lexIndexCache) get(ctx context.Context, db *pgxpool.Pool, version int64, tables int, log *slog.Logger) (*lexIndex, error) {
	if ix := c.cur.Load(); ix != nil && ix.version == version {
		return ix, nil
	}
	if tables > syncIndexTables {
		if old := c.building.Swap(version); old != version {
			go c.buildInBackground(context.WithoutCancel(ctx), db, version, log)
		}
		return c.cur.Load(), nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if ix := c.cur.Load(); ix != nil && ix.version == version {
		return ix, nil
	}
	ix, err := c.build(ctx, db, version, log)
	if err != nil {
		return nil, err
	}
	c.cur.Store(ix)
	return ix, nil
}

func (c *lexIndexCache) build(ctx context.Context, db *pgxpool.Pool, version int64, log *slog.Logger) (*lexIndex, error) {
	start := time.Now()
	ix, err := buildLexIndex(ctx, db, version, c.expand, c.emb)
	if err != nil {
		return nil, err
	}
	log.Info("lexical index built", "version", version, "tables", len(ix.ids), "terms", len(ix.postings),
		"approx_bytes", ix.memoryBytes(), "took", time.Since(start).Round(time.Millisecond))
	return ix, nil
}

func (c *lexIndexCache) buildInBackground(ctx context.Context, db *pgxpool.Pool, version int64, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	c.mu.Lock()
	defer c.mu.Unlock()
	defer c.building.CompareAndSwap(version, 0)
	if ix := c.cur.Load(); ix != nil && ix.version >= version {
		return
	}
	ix, err := c.build(ctx, db, version, log)
	if err != nil {
		log.Warn("lexical index build failed; the lexical list uses ts_rank_cd until the next attempt", "version", version, "err", err)
		return
	}
	if cur := c.cur.Load(); cur == nil || cur.version < version {
		c.cur.Store(ix)
	}
}

// questionTerms are the BM25F query of q: its content words' stems at
// weight 1, their WordNet base forms at weight 1, and the lexicon's
// expansions of each word at expandWeight times the expansion's own weight
// (always below an exact match). A term keeps its largest weight.
func questionTerms(q *Query, lx *vocab.Lexicon, expandWeight float64) []queryTerm {
	w := map[string]float64{}
	var order []string
	add := func(st string, wt float64) {
		if st == "" || stopwords[st] {
			return
		}
		old, ok := w[st]
		if !ok {
			order = append(order, st)
		}
		if wt > old {
			w[st] = wt
		}
	}
	for _, word := range q.content.words {
		add(stem(word), 1)
		if lx == nil {
			continue
		}
		if l := lx.Lemma(word); l != "" {
			add(stem(l), 1)
		}
		if expandWeight <= 0 || isNumber(word) {
			continue
		}
		for _, e := range lx.Expand(word) {
			for _, part := range ident.Split(e.Term) {
				add(stem(part), expandWeight*e.Weight)
			}
		}
	}
	out := make([]queryTerm, len(order))
	for i, st := range order {
		out[i] = queryTerm{stem: st, weight: w[st]}
	}
	return out
}

// identifierExpander is the index-time expansion of identifier tokens by
// lx: the words of a run-together token (customername → customer, name; see
// vocab.Lexicon.Segment) at segmentWeight, then the full words an
// abbreviation stands for (cust → customer) at the lexicon's weights, the
// token's own or its parts' (custcntry → customer, country), and for a
// token with none of these, the lexicon's guesses (bldg → building; see
// vocab.Lexicon.GuessAbbreviation).
func identifierExpander(lx *vocab.Lexicon) func(string) []weightedTerm {
	if lx == nil {
		return nil
	}
	// A catalog repeats its identifier tokens (customer_id in every table
	// that references customers) and a token Segment reads costs it a few
	// microseconds: each distinct token is expanded once. Callers only
	// read the slices.
	var mu sync.Mutex
	memo := map[string][]weightedTerm{}
	return func(tok string) []weightedTerm {
		mu.Lock()
		out, ok := memo[tok]
		mu.Unlock()
		if ok {
			return out
		}
		out = expandIdentifier(lx, tok)
		mu.Lock()
		if len(memo) < maxExpandMemo {
			memo[tok] = out
		}
		mu.Unlock()
		return out
	}
}

// maxExpandMemo bounds identifierExpander's memo (distinct identifier
// tokens; a catalog of 100,000 generated tables has about 20,000).
const maxExpandMemo = 1 << 18

// expandIdentifier is identifierExpander's expansion of one token.
func expandIdentifier(lx *vocab.Lexicon, tok string) []weightedTerm {
	var out []weightedTerm
	abbrev := func(tok string, scale float64) {
		for _, e := range lx.ExpandIdentifier(tok) {
			for _, part := range ident.Split(e.Term) {
				out = append(out, weightedTerm{term: part, weight: scale * e.Weight})
			}
		}
	}
	parts := lx.Segment(tok)
	for _, p := range parts {
		out = append(out, weightedTerm{term: p, weight: segmentWeight, part: true})
	}
	abbrev(tok, 1)
	for _, p := range parts {
		abbrev(p, segmentWeight)
	}
	if len(out) == 0 {
		for _, e := range lx.GuessAbbreviation(tok) {
			out = append(out, weightedTerm{term: e.Term, weight: e.Weight})
		}
	}
	return out
}

// segmentWeight is the index weight of a word recovered from a run-together
// token: nearly a word of the name, but the split is a guess.
const segmentWeight = 0.9
