package retriever

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// This file is what retrieval learns from the people who use Atrium:
// curated examples (atrium.examples), a reviewed glossary (atrium.glossary)
// and the session's previous turn. None of it bypasses the scorer but the
// glossary, which DBAs curate table by table, and the previous turn's
// tables once the scorer kept one of them:
//
//   - an example whose question is close to the asked one adds its tables to
//     the candidates and a logit bonus to them, bounded by
//     Config.ExampleWeight and zero below the similarity gate
//     Config.ExampleGate, so an unrelated example cannot force a table in;
//     a very close one also lowers the other tables' logits (bounded by
//     Config.ExamplePenalty), so its tables are not diluted;
//   - a glossary term the question names has its tables chosen;
//   - a follow-up keeps the previous turn's tables as candidates with a
//     bounded bonus (Config.FollowUpBonus) and lowers the others a little;
//     when Algorithm 1 keeps any of them, it keeps them all (keepPrevious).
//
// The shifts are added to whatever Scorer is configured (bonusScorer), so
// Algorithm 1, abstention and expansion see them as the scorer's opinion.

// Turn is a session's previous question, given with a follow-up so that
// retrieval keeps its tables as candidates.
type Turn struct {
	Question string
	// SQL is the SQL that answered it ("" when none ran).
	SQL string
	// Tables are the schema-qualified tables it used, best first.
	Tables []string
}

// Ask is one question with the context it is asked in.
type Ask struct {
	Question string
	// Previous, when set, is the session's previous turn and the question
	// continues it: its tables are kept as candidates with evidence of
	// their own. The caller decides what is a follow-up.
	Previous *Turn
}

// ExampleHit is a curated example (atrium.examples) whose question is
// close to the one asked.
type ExampleHit struct {
	ID       int64
	Question string
	SQL      string
	// Tables are the schema-qualified tables the example's SQL reads.
	Tables []string
	// Similarity of the example's question to the asked one, in [0, 1].
	Similarity float64
	// Exact is true when the two questions are equal after normalisation
	// (case, blanks, trailing punctuation): the example's SQL may be
	// reused without the LLM.
	Exact bool
}

// GlossaryHit is a reviewed glossary term (atrium.glossary) the question
// names.
type GlossaryHit struct {
	ID          int64
	Term        string
	Definition  string
	SQLFragment string
	// Tables are the schema-qualified tables the term is about.
	Tables []string
}

// Learning defaults. ExampleWeight and ExampleGate were chosen by grid
// search on Spider and Spider-Syn train questions split per database (even
// positions as examples, odd ones evaluated), never on dev; see "Examples
// and glossary in retrieval" in docs/retrieval.md for the command. Both
// are on the lite scorer's logit scale: retraining it may move them, and
// the schema rewrite moved the weight from 4 to 6 (docs/retrieval.md, step 8).
const (
	DefaultExampleWeight  = 6.0
	DefaultExampleGate    = 0.45
	DefaultExamplePenalty = 4.0
	DefaultFollowUpBonus  = 6.0
)

// Reasons the learning evidence adds to a table (RETRIEVE's reason column).
const (
	ReasonExample  = "example"
	ReasonGlossary = "glossary"
	ReasonFollowUp = "follow-up"
)

const (
	// maxExampleHits is how many examples a Result lists.
	maxExampleHits = 5
	// exampleNeighbours is how many of the most similar examples lend their
	// tables a bonus.
	exampleNeighbours = 3
	maxNeighbours     = 8
	// exampleSpread is how far below the most similar example's similarity
	// another may be and still lend its tables.
	exampleSpread = 0.1
	// examplePenaltyGate: see learningParams.penaltyGate (the larger of it
	// and the gate applies).
	examplePenaltyGate = 0.55
	// followUpPenalty lowers, in a follow-up, the logit of the tables the
	// previous turn did not use and the question does not name: on the
	// example penalty's scale, since a follow-up's few words ("and only
	// the ones from Aruba?") are weak evidence for any new table, and ATR's
	// relative threshold otherwise keeps an unrelated table in a small
	// catalog (TestNLFollowUpRealRetrieval).
	followUpPenalty = 4.0
	// glossaryPenalty lowers a table whose only evidence is the words of a
	// glossary term the question names (glossaryExplained): the term pins
	// what those words mean. Set by hand, as followUpPenalty: there is no
	// glossary training data.
	glossaryPenalty = 4.0
	// lexicalShare weighs lexical against vector similarity when an
	// embedder is configured.
	lexicalShare = 0.85
)

// learningParams are the knobs of example evidence for one retrieval.
type learningParams struct {
	weight, gate, penalty, followUp float64
	// neighbours is how many of the most similar examples may lend their
	// tables; spread how far below the best one's similarity they may be.
	neighbours int
	spread     float64
	// penaltyGate is the least similarity of the best example at which the
	// other tables are penalised (below it, its tables only gain).
	penaltyGate float64
}

func (c Config) learningParams() learningParams {
	return learningParams{weight: c.ExampleWeight, gate: c.ExampleGate, penalty: c.ExamplePenalty, followUp: c.FollowUpBonus,
		neighbours: exampleNeighbours, spread: exampleSpread, penaltyGate: max(c.ExampleGate, examplePenaltyGate)}
}

// lends reports whether the i-th most similar example lends its tables.
func (p learningParams) lends(ms []*exampleMatch, i int) bool {
	return i < p.neighbours && ms[i].sim >= p.gate && ms[i].sim >= ms[0].sim-p.spread
}

// learningIndex is one learning_version of the examples and the glossary,
// with their table names resolved against one catalog version. Immutable.
type learningIndex struct {
	version int64 // learning_version
	catalog int64 // catalog version the names were resolved against
	// embedder names the embedder the example vectors came from ("" none).
	embedder string
	examples []*learnedExample
	glossary []*glossEntry
	// idf of a stem over the example questions; unseen stems get idfMax.
	idf    map[string]float64
	idfMax float64
	// byStem and byNorm index the examples (positions in examples) by
	// content stem and by normalised question.
	byStem map[string][]int
	byNorm map[string][]int
}

type learnedExample struct {
	hit  ExampleHit
	ids  []int64
	norm string
	// stems are the question's distinct content stems; norm2 their idf
	// weights' squared norm.
	stems []string
	norm2 float64
	vec   []float32
}

type glossEntry struct {
	hit   GlossaryHit
	stems []string // the term's stems, stopwords kept
	ids   []int64
}

// learningCache holds the current index.
type learningCache struct {
	cur atomic.Pointer[learningIndex]
	mu  sync.Mutex
}

// normalizeQuestion is what Exact compares: lower case, blanks collapsed,
// trailing punctuation and blanks trimmed.
func normalizeQuestion(s string) string {
	s = strings.Join(strings.Fields(strings.ToLower(s)), " ")
	return strings.TrimRight(s, "?.!; ")
}

// learningState reads the two versions the index depends on.
const learningStateSQL = `SELECT version, learning_version FROM atrium.catalog_state`

// learningIndex returns the learning index for learning version lv and catalog
// version cv (0: whatever is cached, loading it when absent).
func (r *Retriever) learningIndex(ctx context.Context, lv, cv int64) (*learningIndex, error) {
	ok := func(li *learningIndex) bool {
		return li != nil && (lv == 0 || li.version == lv) && (cv == 0 || li.catalog == cv)
	}
	if li := r.learn.cur.Load(); ok(li) {
		return li, nil
	}
	r.learn.mu.Lock()
	defer r.learn.mu.Unlock()
	if li := r.learn.cur.Load(); ok(li) {
		return li, nil
	}
	li, err := r.loadLearning(ctx)
	if err != nil {
		return nil, err
	}
	r.learn.cur.Store(li)
	r.log.Debug("learning index loaded", "learning_version", li.version, "catalog_version", li.catalog,
		"examples", len(li.examples), "glossary", len(li.glossary))
	return li, nil
}

// loadLearning reads enabled examples and reviewed glossary entries and
// resolves their tables against the catalog, in one repeatable-read
// transaction so the versions match the rows.
func (r *Retriever) loadLearning(ctx context.Context) (*learningIndex, error) {
	li := &learningIndex{idf: map[string]float64{}}
	type rawExample struct {
		id            int64
		question, sql string
		tables        []string
	}
	var exs []rawExample
	err := pgx.BeginTxFunc(ctx, r.db, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, learningStateSQL).Scan(&li.catalog, &li.version); err != nil {
			return fmt.Errorf("read learning version: %w", classifyCatalogErr(err))
		}
		rows, err := tx.Query(ctx, `SELECT id, question, sql, tables FROM atrium.examples WHERE enabled ORDER BY id`)
		if err != nil {
			return fmt.Errorf("load examples: %w", classifyCatalogErr(err))
		}
		for rows.Next() {
			var e rawExample
			if err := rows.Scan(&e.id, &e.question, &e.sql, &e.tables); err != nil {
				rows.Close()
				return fmt.Errorf("load examples: %w", err)
			}
			exs = append(exs, e)
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("load examples: %w", err)
		}
		rows, err = tx.Query(ctx, `SELECT id, term, definition, coalesce(sql_fragment, ''), tables FROM atrium.glossary WHERE reviewed ORDER BY id`)
		if err != nil {
			return fmt.Errorf("load glossary: %w", classifyCatalogErr(err))
		}
		for rows.Next() {
			g := &glossEntry{}
			if err := rows.Scan(&g.hit.ID, &g.hit.Term, &g.hit.Definition, &g.hit.SQLFragment, &g.hit.Tables); err != nil {
				rows.Close()
				return fmt.Errorf("load glossary: %w", err)
			}
			li.glossary = append(li.glossary, g)
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("load glossary: %w", err)
		}

		// Table names: the examples' (given, else read from their SQL)
		// and the glossary's, resolved in one query.
		refs := make([][]tableRef, len(exs))
		var want []string
		for i, e := range exs {
			if len(e.tables) > 0 {
				refs[i] = parseTableNames(e.tables)
			} else if rs, err := sqlRelations(e.sql); err == nil {
				refs[i] = rs
			} else {
				r.log.Warn("example SQL does not parse; its tables are ignored", "example", e.id, "err", err)
			}
			for _, t := range refs[i] {
				want = append(want, strings.ToLower(t.name))
			}
		}
		grefs := make([][]tableRef, len(li.glossary))
		for i, g := range li.glossary {
			grefs[i] = parseTableNames(g.hit.Tables)
			for _, t := range grefs[i] {
				want = append(want, strings.ToLower(t.name))
			}
		}
		res, err := newTableResolver(ctx, tx, want)
		if err != nil {
			return err
		}
		for i, e := range exs {
			le := &learnedExample{hit: ExampleHit{ID: e.id, Question: e.question, SQL: e.sql}, norm: normalizeQuestion(e.question)}
			for _, t := range refs[i] {
				if id, name, ok := res.resolve(t); ok && !containsID(le.ids, id) {
					le.ids = append(le.ids, id)
					le.hit.Tables = append(le.hit.Tables, name)
				}
			}
			li.examples = append(li.examples, le)
		}
		for i, g := range li.glossary {
			g.hit.Tables = nil
			for _, t := range grefs[i] {
				if id, name, ok := res.resolve(t); ok && !containsID(g.ids, id) {
					g.ids = append(g.ids, id)
					g.hit.Tables = append(g.hit.Tables, name)
				}
			}
			g.stems = analyze(g.hit.Term, false).stems
		}
		return nil
	})
	if err != nil {
		return nil, err
	}

	// Lexical statistics over the example questions.
	df := map[string]int{}
	for _, le := range li.examples {
		le.stems = distinct(analyze(le.hit.Question, true).stems)
		for _, s := range le.stems {
			df[s]++
		}
	}
	n := float64(len(li.examples))
	for s, d := range df {
		li.idf[s] = math.Log((n+1)/(float64(d)+1)) + 1
	}
	li.idfMax = math.Log(n+1) + 1
	li.index()
	if r.emb != nil && len(li.examples) > 0 {
		if err := li.embed(ctx, r.emb); err != nil {
			return nil, err
		}
	}
	return li, nil
}

// index computes the examples' idf norms and the lookup maps.
func (li *learningIndex) index() {
	li.byStem, li.byNorm = map[string][]int{}, map[string][]int{}
	for i, le := range li.examples {
		le.norm2 = 0
		for _, s := range le.stems {
			le.norm2 += li.idf[s] * li.idf[s]
			li.byStem[s] = append(li.byStem[s], i)
		}
		li.byNorm[le.norm] = append(li.byNorm[le.norm], i)
	}
}

// embed embeds the example questions in batches.
func (li *learningIndex) embed(ctx context.Context, emb Embedder) error {
	const batch = 64
	for i := 0; i < len(li.examples); i += batch {
		part := li.examples[i:min(i+batch, len(li.examples))]
		texts := make([]string, len(part))
		for j, le := range part {
			texts[j] = le.hit.Question
		}
		vs, err := emb.Embed(ctx, texts)
		if err != nil {
			return fmt.Errorf("embed example questions: %w", err)
		}
		if len(vs) != len(part) {
			return fmt.Errorf("embed example questions: %d vectors for %d questions", len(vs), len(part))
		}
		for j, le := range part {
			le.vec = unit(vs[j])
		}
	}
	li.embedder = emb.Name()
	return nil
}

func distinct(ss []string) []string {
	seen := map[string]bool{}
	out := ss[:0:0]
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func containsID(ids []int64, id int64) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// learningEvidence is what the index says about one question.
type learningEvidence struct {
	// examples are the most similar examples with their similarity, best
	// first (up to exampleNeighbours+maxExampleHits, similarity > 0).
	examples []*exampleMatch
	nearest  float64
	exact    bool
	glossary []*glossEntry
	// pinned are the glossary's tables: chosen whatever the scorer says.
	pinned map[int64]bool
	// previous are the previous turn's tables.
	previous map[int64]bool
}

type exampleMatch struct {
	ex    *learnedExample
	sim   float64
	exact bool
}

// match finds the examples close to q and the glossary terms it names;
// prev are the previous turn's tables.
func (li *learningIndex) match(q *Query, prev map[int64]bool) *learningEvidence {
	ev := &learningEvidence{pinned: map[int64]bool{}, previous: prev}
	if li == nil {
		return ev
	}
	norm := normalizeQuestion(q.Text)
	qstems := distinct(q.content.stems)
	var qn2 float64
	for _, s := range qstems {
		w := li.idfOf(s)
		qn2 += w * w
	}
	var qvec []float32
	if li.embedder != "" {
		qvec = unit(q.Embedding)
	}
	// Only examples sharing a content stem with the question (or equal to
	// it) are scored: one without any is below every gate, vector
	// similarity (weighted 1−lexicalShare) or not.
	dots := map[int]float64{}
	for _, st := range qstems {
		w := li.idf[st] * li.idf[st]
		for _, i := range li.byStem[st] {
			dots[i] += w
		}
	}
	exact := map[int]bool{}
	for _, i := range li.byNorm[norm] {
		exact[i] = true
		dots[i] += 0
	}
	// The best keep, by similarity then example id (results must not
	// depend on map order), by insertion: keep is small.
	const keep = maxNeighbours + maxExampleHits
	better := func(a, b exampleMatch) bool {
		if a.sim != b.sim {
			return a.sim > b.sim
		}
		return a.ex.hit.ID < b.ex.hit.ID
	}
	top := make([]exampleMatch, 0, keep+1)
	for i, dot := range dots {
		le := li.examples[i]
		m := exampleMatch{ex: le}
		if exact[i] {
			m.sim, m.exact = 1, true
		} else {
			lex := 0.0
			if qn2 > 0 && le.norm2 > 0 {
				lex = dot / math.Sqrt(qn2*le.norm2)
			}
			m.sim = lex
			if len(qvec) > 0 && len(le.vec) == len(qvec) {
				if len(top) == keep && lexicalShare*lex+(1-lexicalShare) < top[keep-1].sim {
					continue // cannot enter the best keep whatever its vector
				}
				m.sim = lexicalShare*lex + (1-lexicalShare)*max(0, dot32(qvec, le.vec))
			}
			m.sim = min(max(m.sim, 0), 1)
		}
		if m.sim <= 0 || (len(top) == keep && !better(m, top[keep-1])) {
			continue
		}
		j := len(top)
		top = append(top, m)
		for ; j > 0 && better(m, top[j-1]); j-- {
			top[j] = top[j-1]
		}
		top[j] = m
		if len(top) > keep {
			top = top[:keep]
		}
	}
	ms := make([]*exampleMatch, len(top))
	for i := range top {
		ms[i] = &top[i]
	}
	ev.examples = ms
	if len(ms) > 0 {
		ev.nearest = ms[0].sim
		ev.exact = ms[0].exact && len(ms[0].ex.ids) > 0
	}
	for _, g := range li.glossary {
		if len(g.stems) > 0 && len(g.ids) > 0 && containsRun(q.all.stems, g.stems) {
			ev.glossary = append(ev.glossary, g)
			for _, id := range g.ids {
				ev.pinned[id] = true
			}
		}
	}
	return ev
}

// previousTables resolves the previous turn's tables to catalog ids (one
// query, only for a follow-up); names the catalog does not hold are
// dropped.
func (r *Retriever) previousTables(ctx context.Context, prev *Turn) (map[int64]bool, error) {
	out := map[int64]bool{}
	if prev == nil || len(prev.Tables) == 0 {
		return out, nil
	}
	refs := parseTableNames(prev.Tables)
	var want []string
	for _, t := range refs {
		want = append(want, strings.ToLower(t.name))
	}
	res, err := newTableResolver(ctx, r.db, want)
	if err != nil {
		return nil, err
	}
	for _, t := range refs {
		if id, _, ok := res.resolve(t); ok {
			out[id] = true
		}
	}
	return out, nil
}

func (li *learningIndex) idfOf(s string) float64 {
	if w, ok := li.idf[s]; ok {
		return w
	}
	return li.idfMax
}

// containsRun reports whether seq holds run as consecutive elements.
func containsRun(seq, run []string) bool {
	for i := 0; i+len(run) <= len(seq); i++ {
		ok := true
		for j := range run {
			if seq[i+j] != run[j] {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// unit returns v scaled to length 1 (nil for a zero vector).
func unit(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		return nil
	}
	n = math.Sqrt(n)
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) / n)
	}
	return out
}

func dot32(a, b []float32) float64 {
	var d float32
	for i := range a {
		d += a[i] * b[i]
	}
	return float64(d)
}

// candidateIDs are the tables the evidence adds to the candidate list:
// those of examples at or above gate, the glossary's and the previous
// turn's.
func (ev *learningEvidence) candidateIDs(p learningParams) []int64 {
	var out []int64
	seen := map[int64]bool{}
	add := func(id int64) {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	for i, m := range ev.examples {
		if !p.lends(ev.examples, i) {
			break
		}
		for _, id := range m.ex.ids {
			add(id)
		}
	}
	for id := range ev.pinned {
		add(id)
	}
	for id := range ev.previous {
		add(id)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// bonuses are the logit shifts of p: the tables of the examples that lend
// (p.lends: among the p.neighbours most similar, at or above the gate and
// within p.spread of the best) get weight·similarity, the best such; the
// previous turn's tables followUp (a table with both gets the larger).
// Every other table gets other: −penalty·similarity of the best example
// when that reaches p.penaltyGate, so that a close example's tables are
// chosen unless the scorer rates another table far above them, and at
// most −followUpPenalty in a follow-up. Glossary tables are never
// lowered.
func (ev *learningEvidence) bonuses(p learningParams) (bonus map[int64]float64, reasons map[int64][]string, other float64) {
	bonus = map[int64]float64{}
	reasons = map[int64][]string{}
	if p.weight > 0 {
		if len(ev.examples) > 0 && ev.examples[0].sim >= max(p.gate, p.penaltyGate) && len(ev.examples[0].ex.ids) > 0 {
			other = -p.penalty * ev.examples[0].sim
		}
		for i, m := range ev.examples {
			if !p.lends(ev.examples, i) {
				break
			}
			for _, id := range m.ex.ids {
				if b := p.weight * m.sim; b > bonus[id] {
					bonus[id] = b
				}
				if !containsString(reasons[id], ReasonExample) {
					reasons[id] = append(reasons[id], ReasonExample)
				}
			}
		}
	}
	if p.followUp > 0 && len(ev.previous) > 0 {
		// A follow-up's own words are few and say little about tables; one
		// it does not share with the previous turn needs more evidence.
		other = min(other, -followUpPenalty)
		for id := range ev.previous {
			bonus[id] = max(bonus[id], p.followUp)
			reasons[id] = append(reasons[id], ReasonFollowUp)
		}
	}
	for id := range ev.pinned {
		bonus[id] = max(bonus[id], 0)
		reasons[id] = append(reasons[id], ReasonGlossary)
	}
	return bonus, reasons, other
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// hits are the Result's view of the evidence.
func (ev *learningEvidence) hits() ([]ExampleHit, []GlossaryHit) {
	var ex []ExampleHit
	for _, m := range ev.examples {
		if len(ex) >= maxExampleHits {
			break
		}
		h := m.ex.hit
		h.Tables = append([]string(nil), h.Tables...)
		h.Similarity, h.Exact = m.sim, m.exact
		ex = append(ex, h)
	}
	var gl []GlossaryHit
	for _, g := range ev.glossary {
		h := g.hit
		h.Tables = append([]string(nil), h.Tables...)
		gl = append(gl, h)
	}
	return ex, gl
}

// bonusScorer adds the learning evidence's shifts to a scorer's table
// logits (other to the tables bonus does not name). The threshold is the
// scorer's own.
type bonusScorer struct {
	Scorer
	bonus map[int64]float64
	other float64
	// spare, when set, exempts a table from a negative other.
	spare func(*TableInfo) bool
	// explained, when set, lowers a table bonus does not name by
	// glossaryPenalty (at least) when it reports true.
	explained func(*Candidate) bool
}

func (b bonusScorer) Score(ctx context.Context, q *Query, window []*Candidate) ([]float64, float64, error) {
	logits, thr, err := b.Scorer.Score(ctx, q, window)
	if err != nil || len(logits) != len(window) {
		return logits, thr, err
	}
	for i, c := range window {
		if v, ok := b.bonus[c.Table.ID]; ok {
			logits[i] += v
			continue
		}
		shift := 0.0
		if b.other >= 0 || b.spare == nil || !b.spare(c.Table) {
			shift = b.other
		}
		if b.explained != nil && b.explained(c) {
			shift = min(shift, -glossaryPenalty)
		}
		logits[i] += shift
	}
	return logits, thr, nil
}

// glossaryExplained reports whether every question word a candidate
// carries lies inside a glossary term the question names. The term's
// tables are chosen and its definition goes to the prompt, so its words
// are accounted for: "outstanding" in the term "outstanding receivables"
// says nothing for hr.performance_reviews, whose rating comment reads "5
// (outstanding)". A word counts as carried when the table's name, a column
// name, a comment or a matched value has it, or the vocabulary bridges it
// to the name or a column. A table that carries none of the question's
// words is left alone (its evidence, if any, is its vector), and so are
// the glossary's own tables, which bonus names. nil: no term matched.
func (ev *learningEvidence) glossaryExplained(q *Query) func(*Candidate) bool {
	if len(ev.glossary) == 0 || q == nil {
		return nil
	}
	term := map[string]bool{}
	for _, g := range ev.glossary {
		for _, st := range g.stems {
			term[st] = true
		}
	}
	// ATR's windows overlap, so a table is asked about more than once; one
	// question's windows are scored in turn, so the memo needs no lock.
	memo := map[int64]bool{}
	return func(c *Candidate) bool {
		if v, ok := memo[c.Table.ID]; ok {
			return v
		}
		v := carriesOnly(q, c, term)
		memo[c.Table.ID] = v
		return v
	}
}

// carriesOnly reports whether c carries some of q's content words and all
// of those it carries are in words (see glossaryExplained).
func carriesOnly(q *Query, c *Candidate, words map[string]bool) bool {
	t := c.Table
	var vals map[string]bool
	carried := false
	for st := range q.content.set {
		if genericWords[st] {
			continue
		}
		has := t.nameA.set[st] || t.colStems[st] || t.comA.set[st] ||
			q.expMatch(st, t.nameA.set, t.nameExp) > 0 || q.expMatch(st, t.colStems, t.colExp) > 0
		if !has && len(c.Values) > 0 {
			if vals == nil {
				vals = map[string]bool{}
				for _, v := range c.Values {
					for _, vs := range analyze(v.Value, true).stems {
						vals[vs] = true
					}
				}
			}
			has = vals[st]
		}
		if !has {
			continue
		}
		if !words[st] {
			return false
		}
		carried = true
	}
	return carried
}

// RetrieveAsk is Retrieve with the question's context: the session's
// previous turn, and (from the catalog) the examples and glossary terms
// that bear on it, reported in Result.Examples and Result.Glossary.
func (r *Retriever) RetrieveAsk(ctx context.Context, a Ask) (*Result, error) {
	return r.retrieve(ctx, a, nil)
}

// tableRef is a relation as named: schema may be empty.
type tableRef struct{ schema, name string }

// parseTableNames reads "schema.table" or "table" names as stored in a
// tables column (double quotes allowed around either part).
func parseTableNames(names []string) []tableRef {
	var out []tableRef
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		schema, name, ok := splitQualified(n)
		if !ok {
			continue
		}
		out = append(out, tableRef{schema: schema, name: name})
	}
	return out
}

// splitQualified splits "a.b", `"A"."b.c"` and "b" into schema and name.
func splitQualified(s string) (schema, name string, ok bool) {
	var parts []string
	var cur strings.Builder
	quoted := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' && quoted && i+1 < len(s) && s[i+1] == '"':
			cur.WriteByte('"')
			i++
		case c == '"':
			quoted = !quoted
		case c == '.' && !quoted:
			parts = append(parts, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	parts = append(parts, cur.String())
	switch len(parts) {
	case 1:
		return "", parts[0], parts[0] != ""
	case 2:
		return parts[0], parts[1], parts[0] != "" && parts[1] != ""
	case 3: // database.schema.table
		return parts[1], parts[2], parts[1] != "" && parts[2] != ""
	}
	return "", "", false
}

// tableResolver resolves names against the catalog's tables: a qualified
// name by schema and name, an unqualified one by a unique table of that
// name, else the one in public. Names are compared ignoring case: the
// tables column is written by hand as often as by a parser.
type tableResolver struct {
	byName map[string][]catalogName // lower(table) → tables
}

type catalogName struct {
	id           int64
	schema, name string
}

type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

var _ querier = (*pgxpool.Pool)(nil)

func newTableResolver(ctx context.Context, db querier, lowerNames []string) (*tableResolver, error) {
	tr := &tableResolver{byName: map[string][]catalogName{}}
	if len(lowerNames) == 0 {
		return tr, nil
	}
	rows, err := db.Query(ctx, `SELECT id, schema_name, table_name FROM atrium.tables WHERE lower(table_name) = ANY($1) ORDER BY id`, distinct(lowerNames))
	if err != nil {
		return nil, fmt.Errorf("resolve learning tables: %w", classifyCatalogErr(err))
	}
	defer rows.Close()
	for rows.Next() {
		var c catalogName
		if err := rows.Scan(&c.id, &c.schema, &c.name); err != nil {
			return nil, fmt.Errorf("resolve learning tables: %w", err)
		}
		k := strings.ToLower(c.name)
		tr.byName[k] = append(tr.byName[k], c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("resolve learning tables: %w", err)
	}
	return tr, nil
}

func (tr *tableResolver) resolve(t tableRef) (int64, string, bool) {
	cs := tr.byName[strings.ToLower(t.name)]
	pick := func(match func(catalogName) bool) (int64, string, bool) {
		var found *catalogName
		for i := range cs {
			if match(cs[i]) {
				if found != nil && found.schema != cs[i].schema {
					return 0, "", false
				}
				if found == nil || cs[i].name == t.name {
					found = &cs[i]
				}
			}
		}
		if found == nil {
			return 0, "", false
		}
		return found.id, found.schema + "." + found.name, true
	}
	if t.schema != "" {
		return pick(func(c catalogName) bool { return strings.EqualFold(c.schema, t.schema) })
	}
	if len(cs) == 1 {
		return cs[0].id, cs[0].schema + "." + cs[0].name, true
	}
	return pick(func(c catalogName) bool { return c.schema == "public" })
}

// namedBeyondExample reports whether the question names t (every word of
// its name, generic words aside) and the closest example's question does
// not: the question asks for something the example did not, and the
// example's penalty must not keep that table out.
func (ev *learningEvidence) namedBeyondExample(q *Query) func(*TableInfo) bool {
	if len(ev.examples) == 0 && len(ev.previous) == 0 {
		return nil
	}
	// In a follow-up without a close example, a table is spared when the
	// question names it ("and by warehouse?"): the previous turn did not
	// use it, but the user just asked for it.
	ex := map[string]bool{}
	if len(ev.examples) > 0 {
		for _, st := range ev.examples[0].ex.stems {
			ex[st] = true
		}
	}
	return func(t *TableInfo) bool {
		named, beyond := false, false
		for _, st := range t.nameA.stems {
			if genericWords[st] || stopwords[st] {
				continue
			}
			if !q.content.set[st] {
				return false
			}
			named = true
			if !ex[st] {
				beyond = true
			}
		}
		return named && beyond
	}
}

// keepPrevious pins the previous turn's tables when Algorithm 1 kept any
// of them: a follow-up that stays on the previous question's topic refines
// its SQL ("and only for London?"), which joined all of them. Their bonus
// alone does not ensure it: the relative cut measures every table against
// the best one, and a previous table the follow-up's own words also name
// can outrank the others by more than the bonus (a scorer trained with
// another embedder than the catalog's spreads logits further). A follow-up
// that moved on keeps none of them, so it pins nothing.
func (ev *learningEvidence) keepPrevious(atr *atrResult) {
	for _, s := range atr.Ranked[:atr.Selected] {
		if ev.previous[s.Table.ID] {
			pinSelected(atr, ev.previous)
			return
		}
	}
}

// pinSelected moves the pinned tables Algorithm 1 left out into its
// selection, behind the tables it selected.
func pinSelected(atr *atrResult, pinned map[int64]bool) {
	if len(pinned) == 0 {
		return
	}
	for i := atr.Selected; i < len(atr.Ranked); i++ {
		s := atr.Ranked[i]
		if !pinned[s.Table.ID] {
			continue
		}
		copy(atr.Ranked[atr.Selected+1:i+1], atr.Ranked[atr.Selected:i])
		atr.Ranked[atr.Selected] = s
		atr.Selected++
	}
}

// overridesAbstention reports whether the evidence outweighs a weak
// selection: a glossary term named (its tables are selected), an example
// asked in the same words, or a selected table that a close example or
// the previous turn lent its bonus with a logit still above the floor.
// Abstention's coverage test asks whether the selected tables name the
// question's words; a close example or the previous turn vouches for them
// instead ("buyers" names no column; "and only for Portugal?" names
// nothing of the previous turn's tables).
func (ev *learningEvidence) overridesAbstention(atr *atrResult, floor float64, reasons map[int64][]string) bool {
	for _, s := range atr.Ranked[:atr.Selected] {
		id := s.Table.ID
		if ev.pinned[id] || (ev.exact && containsID(ev.examples[0].ex.ids, id)) {
			return true
		}
		if s.Logit >= floor && (containsString(reasons[id], ReasonExample) || containsString(reasons[id], ReasonFollowUp)) {
			return true
		}
	}
	return false
}

// pinExact selects an exactly matching example's tables when Algorithm 1
// selected nothing at all.
func (ev *learningEvidence) pinExact(atr *atrResult) {
	if !ev.exact || atr.Selected > 0 {
		return
	}
	pinSelected(atr, idSet(ev.examples[0].ex.ids))
}

// keepPinned puts back the pinned tables expansion's refinement dropped,
// and joins them: the join paths are recomputed over the final set, or the
// prompt would show a glossary table with no way to join it, and
// recomputed preferring direct joins between pinned tables whenever two or
// more are chosen.
func keepPinned(ex *expansion, atr *atrResult, pinned map[int64]bool, g *graph, minEdgeScore float64) {
	if len(pinned) == 0 {
		return
	}
	in := map[int64]bool{}
	for _, s := range ex.chosen {
		in[s.Table.ID] = true
	}
	for _, t := range ex.bridges {
		in[t.ID] = true
	}
	added := false
	for _, s := range atr.Ranked {
		if pinned[s.Table.ID] && !in[s.Table.ID] {
			ex.chosen = append(ex.chosen, s)
			in[s.Table.ID] = true
			added = true
		}
	}
	npinned := 0
	for id := range pinned {
		if in[id] {
			npinned++
		}
	}
	if !added && npinned < 2 {
		return
	}
	info := map[int64]*TableInfo{}
	for id, t := range ex.info {
		info[id] = t
	}
	for _, s := range ex.chosen {
		info[s.Table.ID] = s.Table
	}
	for _, t := range ex.bridges {
		info[t.ID] = t
	}
	ex.paths = joinPaths(g, in, info, minEdgeScore, pinned)
}
