package retriever

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/atriumdb/atrium/internal/ident"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"
)

// Embedder turns text into vectors. It must be the embedder the catalog was
// built with (atrium.catalog_state names it), or cosine scores are
// meaningless. catalog.Embedder satisfies it.
type Embedder interface {
	Name() string
	Dimension() int
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// candidateSQL is the whole hybrid stage in one round trip (PNEUMA): the n·k
// best tables by ts_rank_cd over the weighted tsvector, the n·k nearest by
// cosine (HNSW), the value-index entries sharing a word with the question,
// and the tables named in $5 (training uses it to add its own value hits);
// then both scores for every table of the union, so a table found by one
// list gets the other list's score too. It also returns the catalog version
// so the caller notices a change without another query.
//
// The lexical list ranks by the full question ($1) only the tables matching
// $7, which is $1 itself on catalogs of up to lexMatchBudget tables and, on
// larger ones, the question's rarer terms (see lexStats.matchQuery): ranking
// every table that shares a common word with the question would cost
// milliseconds per thousand matches.
//
// The union is looked up as an id array, not joined: a generic plan (pgx
// prepares the statement, and PostgreSQL may switch to a generic plan after
// five executions) cannot tell how few ids the CTEs yield and would hash
// join them against a sequential scan of every table.
const candidateSQL = `
WITH lq AS (
  SELECT CASE WHEN $1::text = '' THEN NULL ELSE to_tsquery('english', $1::text) END AS q
), lm AS (
  SELECT CASE WHEN $7::text = '' THEN NULL ELSE to_tsquery('english', $7::text) END AS q
), vq AS (
  SELECT CASE WHEN $4::text = '' THEN NULL ELSE to_tsquery('simple', $4::text) END AS q
), lex AS (
  SELECT t.id FROM atrium.tables t, lq, lm
  WHERE lm.q IS NOT NULL AND t.tsv @@ lm.q
  ORDER BY ts_rank_cd(t.tsv, lq.q) DESC, t.schema_name, t.table_name
  LIMIT $3
), sem AS (
  SELECT t.id FROM atrium.tables t
  WHERE $2::vector IS NOT NULL AND t.embedding IS NOT NULL
  ORDER BY t.embedding <=> $2::vector
  LIMIT $3
), val AS (
  SELECT v.table_id, v.column_name, v.value FROM atrium.value_index v, vq
  WHERE vq.q IS NOT NULL AND v.tsv @@ vq.q
  ORDER BY ts_rank(v.tsv, vq.q) DESC, length(v.value), v.value, v.column_name, v.table_id
  LIMIT $6
), ids AS (
  SELECT id FROM lex UNION SELECT id FROM sem UNION SELECT table_id FROM val
  UNION SELECT unnest($5::bigint[])
)
SELECT t.id,
       CASE WHEN lq.q IS NULL THEN 0 ELSE ts_rank_cd(t.tsv, lq.q) END,
       CASE WHEN $2::vector IS NULL OR t.embedding IS NULL THEN 0 ELSE 1 - (t.embedding <=> $2::vector) END,
       coalesce((SELECT array_agg(val.column_name || E'\x1f' || val.value ORDER BY val.column_name, val.value)
                 FROM val WHERE val.table_id = t.id), '{}'),
       (SELECT version FROM atrium.catalog_state),
       (SELECT learning_version FROM atrium.catalog_state)
FROM atrium.tables t CROSS JOIN lq
WHERE t.id = ANY (ARRAY(SELECT id FROM ids))
ORDER BY t.id`

// hybridParams are the knobs of the candidate stage.
type hybridParams struct {
	perList   int     // n·k per list
	valueRows int     // value-index rows considered
	alpha     float64 // weight of the lexical score
	valueW    float64 // share of value evidence in the lexical score
	keep      int     // C
	// stats bound the value lookup on large catalogs; nil looks up every
	// question word.
	stats *lexStats
	// index ranks the lexical list (BM25F over the question's terms); nil
	// falls back to ts_rank_cd in SQL.
	index *lexIndex
	terms []queryTerm
	// force are tables kept among the candidates whatever their rank:
	// the learning evidence's (examples, glossary, previous turn).
	force map[int64]bool
}

type rawCandidate struct {
	id     int64
	lex    float64
	sem    float64
	values []ValueHit
	// word is the table's rank in the word-vector leg (0: not in it).
	word int
	// wcos is the cosine of the table's and the question's word vectors
	// (NaN: either has none, or there is no index).
	wcos float64
}

// fetchCandidates runs candidateSQL. extraIDs and extraValues let training
// supply value evidence that the database does not hold (see train.go).
func (r *Retriever) fetchCandidates(ctx context.Context, q *Query, p hybridParams, extraIDs []int64) (_ []rawCandidate, version, learningVersion int64, _ error) {
	lexTerms := tsqueryTerms(q.terms, true)
	valTerms := tsqueryTerms(q.terms, false)
	var valKept []string
	for _, w := range valTerms {
		if len(w) > 1 {
			valKept = append(valKept, w)
		}
	}
	var vec any
	if len(q.Embedding) > 0 {
		vec = pgvector.NewVector(q.Embedding)
	}
	if extraIDs == nil {
		extraIDs = []int64{}
	}
	// An address or code is looked up whole, quoted so that to_tsquery
	// parses it as to_tsvector parsed the sampled value (valueLiterals
	// admits no quote or backslash). On a large catalog it is counted like
	// a word: a date or an ordinal ("2024-05-03", "5th") may be as common
	// as one.
	for _, lit := range q.literals {
		valKept = append(valKept, "'"+lit+"'")
	}
	lexQuery := strings.Join(lexTerms, " | ")
	matchQuery := lexQuery
	if p.stats != nil && p.stats.ndoc != nil {
		words, err := p.stats.words(ctx, r.db, append(append([]string(nil), lexTerms...), valKept...))
		if err != nil {
			return nil, 0, 0, fmt.Errorf("hybrid search: %w", classifyCatalogErr(err))
		}
		matchQuery = p.stats.matchQuery(lexTerms, words)
		valKept = rareValueTerms(valKept, words)
	}
	var scores []float32
	if p.index != nil {
		// The lexical list comes from the BM25F index: its best n·k join
		// the union as extra ids and the SQL's own lexical list is off.
		scores = p.index.score(p.terms)
		extraIDs = append(append([]int64(nil), extraIDs...), p.index.top(scores, p.perList)...)
		lexQuery, matchQuery = "", ""
	}
	var word map[int64]int
	var qv []float32
	if p.index != nil && p.index.words != nil {
		qv = questionWordVector(q)
		for i, d := range p.index.words.nearest(qv, wordLegSlots) {
			if word == nil {
				word = map[int64]int{}
			}
			id := p.index.ids[d]
			word[id] = i + 1
			extraIDs = append(extraIDs, id)
		}
	}
	rows, err := r.db.Query(ctx, candidateSQL,
		lexQuery, vec, p.perList, strings.Join(valKept, " | "), extraIDs, p.valueRows, matchQuery)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("hybrid search: %w", classifyCatalogErr(err))
	}
	defer rows.Close()
	var out []rawCandidate
	for rows.Next() {
		var c rawCandidate
		var lex, sem float32
		var vals []string
		if err := rows.Scan(&c.id, &lex, &sem, &vals, &version, &learningVersion); err != nil {
			return nil, 0, 0, fmt.Errorf("hybrid search: %w", err)
		}
		c.lex, c.sem = float64(lex), float64(sem)
		c.word = word[c.id]
		c.wcos = math.NaN()
		if p.index != nil {
			c.lex = p.index.scoreOf(scores, c.id)
			if d, ok := p.index.docOf[c.id]; ok && qv != nil {
				c.wcos = p.index.words.cosine(d, qv)
			}
		}
		for _, v := range vals {
			col, val, _ := strings.Cut(v, "\x1f")
			c.values = append(c.values, ValueHit{Column: col, Value: val})
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, 0, fmt.Errorf("hybrid search: %w", classifyCatalogErr(err))
	}
	return out, version, learningVersion, nil
}

// combine turns the raw union into the ranked candidate list: min-max
// normalisation of each score over the union, value evidence folded into
// the lexical score, s = α·s_lex + (1−α)·s_sem, the best C kept, the last
// wordLegSlots of them kept for the word-vector leg (reserveWordLeg).
func combine(q *Query, raws []rawCandidate, tables map[int64]*TableInfo, p hybridParams) []*Candidate {
	cands := make([]*Candidate, 0, len(raws))
	named, colNamed := map[string]bool{}, map[string]bool{}
	for _, rc := range raws {
		if t := tables[rc.id]; t != nil {
			for _, st := range t.nameA.stems {
				named[st] = true
			}
			for _, w := range ident.Split(t.Schema) {
				named[stem(w)] = true
			}
			for _, c := range t.colA {
				for _, st := range c.stems {
					colNamed[st] = true
				}
			}
		}
	}
	marked := markedWords(q.Text)
	word := map[int64]int{}
	for _, rc := range raws {
		if rc.word > 0 {
			word[rc.id] = rc.word
		}
	}
	for _, rc := range raws {
		t := tables[rc.id]
		if t == nil {
			continue
		}
		c := &Candidate{Table: t, LexRaw: rc.lex, SemRaw: rc.sem, Values: append([]ValueHit(nil), rc.values...)}
		c.wordCos, c.wordCosOK = rc.wcos, !math.IsNaN(rc.wcos)
		scoreValues(q, c, valueWordFilter{named: named, colNamed: colNamed, marked: marked})
		cands = append(cands, c)
	}
	shareValues(cands)
	if len(cands) == 0 {
		return nil
	}
	lexMin, lexMax := cands[0].LexRaw, cands[0].LexRaw
	semMin, semMax := cands[0].SemRaw, cands[0].SemRaw
	for _, c := range cands {
		lexMin, lexMax = min(lexMin, c.LexRaw), max(lexMax, c.LexRaw)
		semMin, semMax = min(semMin, c.SemRaw), max(semMax, c.SemRaw)
	}
	norm := func(v, lo, hi float64) float64 {
		if hi-lo <= 1e-12 {
			if hi > 0 {
				return 1
			}
			return 0
		}
		return (v - lo) / (hi - lo)
	}
	for _, c := range cands {
		val := max(c.valFull, 0.5*c.valPart)
		c.SLex = (1-p.valueW)*norm(c.LexRaw, lexMin, lexMax) + p.valueW*val
		c.SSem = norm(c.SemRaw, semMin, semMax)
		c.S = p.alpha*c.SLex + (1-p.alpha)*c.SSem
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].S != cands[j].S {
			return cands[i].S > cands[j].S
		}
		// Names, not ids, break ties: ids depend on the order a sync
		// inserted tables, and training must be reproducible.
		if cands[i].Table.Schema != cands[j].Table.Schema {
			return cands[i].Table.Schema < cands[j].Table.Schema
		}
		return cands[i].Table.Name < cands[j].Table.Name
	})
	if len(cands) > p.keep {
		kept := reserveWordLeg(cands, p.keep, word)
		in := make(map[*Candidate]bool, len(kept))
		for _, c := range kept {
			in[c] = true
		}
		for _, c := range cands {
			if p.force[c.Table.ID] && !in[c] {
				kept = append(kept, c)
			}
		}
		cands = kept
	}
	for i, c := range cands {
		c.Rank = i + 1
	}
	schemaCoverage(q, cands)
	return cands
}

// lexMatchBudget is how many full-text matches the lexical list ranks at
// most (about, by document frequencies): ranking reads each match's heap
// tuple, some 10 µs apiece when the catalog outgrows shared_buffers.
// Catalogs of up to this many tables rank every match, so their scores do
// not depend on it.
const lexMatchBudget = 1000

// maxMatchPairs bounds the AND pairs of common terms in a match query.
const maxMatchPairs = 16

// valueMatchCap drops, on large catalogs, a question word from the value
// lookup when more value-index entries than this hold it: the lookup would
// rank them all, and a value shared by so many columns says nothing about
// which table the question means (the LIMIT would keep an arbitrary few).
const valueMatchCap = 500

// lexStats are what the candidate stage knows of one catalog version's
// vocabulary: the tables' lexeme document frequencies, from ts_stat over
// atrium.tables.tsv, and a cache of the question words seen. Immutable but
// for that cache.
type lexStats struct {
	version int64
	tables  int
	// ndoc maps a lexeme to how many tables hold it; nil when the catalog
	// has no more than lexMatchBudget tables and every match is ranked.
	ndoc map[string]int

	mu struct {
		sync.Mutex
		words map[string]wordStats
	}
}

// wordStats is what the candidate stage needs to know of a question word.
type wordStats struct {
	lexemes []string // its 'english' lexemes (none for a stop word)
	values  int      // value-index entries holding it, counted up to valueMatchCap+1
}

// maxCachedWords bounds lexStats' word cache; beyond it the cache restarts.
const maxCachedWords = 100_000

// lexStatsCache holds the lexStats of the latest catalog version seen.
type lexStatsCache struct {
	mu  sync.Mutex // serialises loads
	cur atomic.Pointer[lexStats]
}

// get returns the stats for version, loading them (once per version) when
// absent. ts_stat reads every table's tsvector, about a second per 100,000
// tables, which a catalog version pays once, not every question.
func (c *lexStatsCache) get(ctx context.Context, db *pgxpool.Pool, version int64) (*lexStats, error) {
	if s := c.cur.Load(); s != nil && s.version == version {
		return s, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.cur.Load(); s != nil && s.version == version {
		return s, nil
	}
	s, err := loadLexStats(ctx, db, version)
	if err != nil {
		return nil, err
	}
	c.cur.Store(s)
	return s, nil
}

func loadLexStats(ctx context.Context, db *pgxpool.Pool, version int64) (*lexStats, error) {
	s := &lexStats{version: version}
	s.mu.words = map[string]wordStats{}
	if err := db.QueryRow(ctx, `SELECT count(*) FROM atrium.tables`).Scan(&s.tables); err != nil {
		return nil, fmt.Errorf("count catalog tables: %w", classifyCatalogErr(err))
	}
	if s.tables <= lexMatchBudget {
		return s, nil
	}
	rows, err := db.Query(ctx, `SELECT word, ndoc FROM ts_stat('SELECT tsv FROM atrium.tables')`)
	if err != nil {
		return nil, fmt.Errorf("read lexeme frequencies: %w", classifyCatalogErr(err))
	}
	defer rows.Close()
	s.ndoc = map[string]int{}
	for rows.Next() {
		var w string
		var n int
		if err := rows.Scan(&w, &n); err != nil {
			return nil, fmt.Errorf("read lexeme frequencies: %w", err)
		}
		s.ndoc[w] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read lexeme frequencies: %w", classifyCatalogErr(err))
	}
	return s, nil
}

// wordStatsSQL stems words with the tsvector's own configuration and counts
// (up to a cap, so a common word costs no more than a rare one) the
// value-index entries holding each.
const wordStatsSQL = `
SELECT w, tsvector_to_array(to_tsvector('english', w)),
       (SELECT count(*) FROM (SELECT 1 FROM atrium.value_index v
                              WHERE v.tsv @@ to_tsquery('simple', w) LIMIT $2) s)
FROM unnest($1::text[]) AS w`

// words returns the stats of words, asking the server only for words not
// seen before in this catalog version.
func (s *lexStats) words(ctx context.Context, db *pgxpool.Pool, words []string) (map[string]wordStats, error) {
	out := make(map[string]wordStats, len(words))
	var missing []string
	s.mu.Lock()
	for _, w := range words {
		if ws, ok := s.mu.words[w]; ok {
			out[w] = ws
		} else if !slices.Contains(missing, w) {
			missing = append(missing, w)
		}
	}
	s.mu.Unlock()
	if len(missing) == 0 {
		return out, nil
	}
	rows, err := db.Query(ctx, wordStatsSQL, missing, valueMatchCap+1)
	if err != nil {
		return nil, fmt.Errorf("look up question words: %w", err)
	}
	defer rows.Close()
	got := map[string]wordStats{}
	for rows.Next() {
		var w string
		var ws wordStats
		if err := rows.Scan(&w, &ws.lexemes, &ws.values); err != nil {
			return nil, fmt.Errorf("look up question words: %w", err)
		}
		got[w] = ws
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("look up question words: %w", err)
	}
	s.mu.Lock()
	if len(s.mu.words)+len(got) > maxCachedWords {
		s.mu.words = map[string]wordStats{}
	}
	for w, ws := range got {
		s.mu.words[w] = ws
		out[w] = ws
	}
	s.mu.Unlock()
	return out, nil
}

// rareValueTerms drops the value-lookup terms that more than valueMatchCap
// value-index entries hold.
func rareValueTerms(terms []string, words map[string]wordStats) []string {
	var out []string
	for _, w := range terms {
		if words[w].values <= valueMatchCap {
			out = append(out, w)
		}
	}
	return out
}

// matchQuery returns the tsquery (to_tsquery syntax over terms) whose GIN
// matches the lexical list ranks. With every match affordable it is the OR
// of all terms. Otherwise it keeps the rarest terms while their document
// frequencies sum to at most lexMatchBudget, and stands in for the common
// ones with AND pairs of them (a table naming two of the question's common
// words is a likely answer; one naming one of them rarely), estimated as
// independent, within what is left of the budget. A table that matches only
// a dropped term can still enter through the vector list or the value
// index, and every candidate is scored by the full question.
func (s *lexStats) matchQuery(terms []string, words map[string]wordStats) string {
	if s.ndoc == nil || len(terms) == 0 {
		return strings.Join(terms, " | ")
	}
	type term struct {
		w  string
		df int
	}
	var ts []term
	total := 0
	for _, w := range terms {
		lx := words[w].lexemes
		if len(lx) == 0 {
			continue // a stop word: to_tsquery drops it anyway
		}
		df := 0
		for _, l := range lx {
			df = max(df, s.ndoc[l])
		}
		ts = append(ts, term{w, df})
		total += df
	}
	if total <= lexMatchBudget {
		return strings.Join(terms, " | ")
	}
	slices.SortStableFunc(ts, func(a, b term) int { return cmp.Compare(a.df, b.df) })
	var parts []string
	used, i := 0, 0
	for ; i < len(ts) && used+ts[i].df <= lexMatchBudget; i++ {
		parts = append(parts, ts[i].w)
		used += ts[i].df
	}
	common := ts[i:]
	if len(common) == 1 && len(parts) == 0 {
		// A lone common term: its matches are the only lexical evidence.
		return common[0].w
	}
	type pair struct {
		a, b string
		est  float64
	}
	var pairs []pair
	for x := range common {
		for y := x + 1; y < len(common); y++ {
			pairs = append(pairs, pair{common[x].w, common[y].w, float64(common[x].df) * float64(common[y].df) / float64(s.tables)})
		}
	}
	slices.SortStableFunc(pairs, func(a, b pair) int { return cmp.Compare(a.est, b.est) })
	est := float64(used)
	for k, p := range pairs {
		if k >= maxMatchPairs || (est+p.est > lexMatchBudget && !(k == 0 && len(parts) == 0)) {
			break
		}
		parts = append(parts, "("+p.a+" & "+p.b+")")
		est += p.est
	}
	return strings.Join(parts, " | ")
}
