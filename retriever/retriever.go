package retriever

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/atriumdb/atrium/retriever/vocab"
)

// Config tunes retrieval. The zero value means every default.
type Config struct {
	// Candidates is C, the length of the hybrid candidate list ATR reranks.
	// Default 50.
	Candidates int
	// PerList is n·k, how many tables each of the lexical and the vector
	// lists contributes before the union. Default 2·Candidates.
	PerList int
	// Alpha weighs the lexical score against the vector score:
	// s = α·s_lex + (1−α)·s_sem. Default 0.6; a negative value means 0.
	Alpha float64
	// ValueWeight is the share of value-index evidence in s_lex. Default 0.3.
	ValueWeight float64
	// QuestionExpansion scales the weight of the vocabulary's expansions of
	// question words (synonyms, hypernyms, learned pairs) in the lexical
	// list; an exact match counts 1. Default 0.5; negative disables.
	QuestionExpansion float64
	// SchemaRewrite is the least vocabulary-bridge weight (in
	// QuestionExpansion's units) at which a question word no candidate
	// names is said in a candidate's words before scoring ("nation" →
	// country; see rewriteToSchema). Default DefaultSchemaRewrite;
	// negative disables.
	SchemaRewrite float64
	// ValueRows bounds the value-index entries considered per question.
	// Default 200.
	ValueRows int
	// Window and Retain are ATR's W and R. Defaults 20 and 15 (10 and 5 suit
	// catalogs of many thousand tables).
	Window, Retain int
	// MaxQuestionBytes rejects longer questions (SQLSTATE 54000). Default
	// 4096.
	MaxQuestionBytes int
	// Expansion tunes join-path expansion.
	Expansion ExpansionConfig
	// Multihop enables MURRE multi-hop retrieval (needs Options.Rewriter).
	Multihop MultihopConfig
	// AbstainFloor is the lowest scorer logit the best table must reach for
	// the retriever to choose anything: below it the question is taken as
	// one no catalogued table answers and the chosen set is empty (see
	// abstain.go). Nil: DefaultAbstainFloor; -Inf disables abstention.
	AbstainFloor *float64
	// AbstainCoverage is the least share of the question's content words
	// Algorithm 1's selection must name (table, column and comment words,
	// matched values) for anything to be chosen. Nil:
	// DefaultAbstainCoverage; 0 disables.
	AbstainCoverage *float64
	// AbstainCoverageCosine, when positive, also counts a question word as
	// named by the selection when its word vector reaches this cosine with
	// a word the selected tables carry (abstain.go). 0: off (the shipped
	// behaviour); docs/retrieval.md, step 22.
	AbstainCoverageCosine float64
	// AbstainEvidence adds the absolute-evidence rule (abstain.go). Nil:
	// off (the shipped behaviour).
	AbstainEvidence *AbstainEvidence
	// TopWhenEmpty selects Algorithm 1's best-ranked table when its
	// threshold outranks every table, and leaves the verdict to the
	// abstention floors as for any selection: the window threshold is
	// relative and untuned for abstention, the floors are chosen for it
	// (docs/retrieval.md, step 38). With abstention off the set is then
	// never empty. Nil: DefaultTopWhenEmpty.
	TopWhenEmpty *bool
	// ExampleWeight bounds the logit bonus an example's tables get: the
	// bonus is ExampleWeight × the example's similarity to the question.
	// Default DefaultExampleWeight; negative disables example evidence.
	ExampleWeight float64
	// ExampleGate is the least similarity (in [0, 1]) at which an example
	// lends its tables anything. Default DefaultExampleGate.
	ExampleGate float64
	// ExamplePenalty lowers the logit of every table a close example
	// does not name by ExamplePenalty × its similarity, when the closest
	// example's similarity reaches the gate and 0.55 (a table the question
	// names and the example does not is spared). Default
	// DefaultExamplePenalty; negative: none.
	ExamplePenalty float64
	// FollowUpBonus is the logit bonus the previous turn's tables get in a
	// follow-up (RetrieveAsk with Previous). Default DefaultFollowUpBonus;
	// negative disables.
	FollowUpBonus float64

	// defaulted marks a Config withDefaults has filled: "off" is stored
	// as 0 there, which a second pass would read as "unset" and turn
	// back into the default (retriever.New after WithDefaults did).
	defaulted bool
}

// DefaultWindow and DefaultRetain are ATR's sliding window W and the R
// tables each window keeps (Algorithm 1). Training uses the same values, so
// the threshold it learns is the one serving applies.
const (
	DefaultWindow = 20
	DefaultRetain = 15
)

func (c Config) withDefaults() Config {
	if c.defaulted {
		return c
	}
	c.defaulted = true
	if c.Candidates <= 0 {
		c.Candidates = 50
	}
	if c.PerList <= 0 {
		c.PerList = 2 * c.Candidates
	}
	switch {
	case c.Alpha == 0:
		c.Alpha = 0.6
	case c.Alpha < 0:
		c.Alpha = 0
	}
	if c.ValueWeight == 0 {
		c.ValueWeight = 0.3
	}
	switch {
	case c.QuestionExpansion == 0:
		c.QuestionExpansion = 0.5
	case c.QuestionExpansion < 0:
		c.QuestionExpansion = 0
	}
	switch {
	case c.SchemaRewrite == 0:
		c.SchemaRewrite = DefaultSchemaRewrite
	case c.SchemaRewrite < 0:
		c.SchemaRewrite = 0
	}
	if c.ValueRows <= 0 {
		c.ValueRows = 200
	}
	if c.Window <= 0 {
		c.Window = DefaultWindow
	}
	if c.Retain <= 0 {
		c.Retain = DefaultRetain
	}
	if c.MaxQuestionBytes <= 0 {
		c.MaxQuestionBytes = 4096
	}
	c.Multihop = c.Multihop.withDefaults()
	switch {
	case c.ExampleWeight == 0:
		c.ExampleWeight = DefaultExampleWeight
	case c.ExampleWeight < 0:
		c.ExampleWeight = 0
	}
	switch {
	case c.ExamplePenalty == 0:
		c.ExamplePenalty = DefaultExamplePenalty
	case c.ExamplePenalty < 0:
		c.ExamplePenalty = 0
	}
	if c.ExampleGate <= 0 {
		c.ExampleGate = DefaultExampleGate
	}
	switch {
	case c.FollowUpBonus == 0:
		c.FollowUpBonus = DefaultFollowUpBonus
	case c.FollowUpBonus < 0:
		c.FollowUpBonus = 0
	}
	if c.AbstainFloor == nil {
		v := DefaultAbstainFloor
		c.AbstainFloor = &v
	}
	if c.AbstainCoverage == nil {
		v := DefaultAbstainCoverage
		c.AbstainCoverage = &v
	}
	if c.TopWhenEmpty == nil {
		v := DefaultTopWhenEmpty
		c.TopWhenEmpty = &v
	}
	return c
}

// Options are the retriever's dependencies.
type Options struct {
	// Logger; nil discards.
	Logger *slog.Logger
	// Embedder embeds questions; it must match the catalog's embedder. Nil
	// disables the vector list (lexical and value evidence only).
	Embedder Embedder
	// Scorer reranks candidates; nil means the built-in lite model.
	Scorer Scorer
	// Rewriter is the LLM for multi-hop retrieval; nil disables it.
	Rewriter Rewriter
	// Vocabulary bridges question and schema words; nil means
	// vocab.Default(), the lexicon compiled into the binary.
	Vocabulary *vocab.Lexicon
}

// Retriever finds the tables a question needs. Safe for concurrent use.
type Retriever struct {
	db   *pgxpool.Pool
	cfg  Config
	log  *slog.Logger
	emb  Embedder
	sc   Scorer
	lite *LiteModel
	// abstainer is the lite model's abstention model, nil when the
	// scorer decides abstention itself.
	abstainer *LiteModel
	rw        Rewriter

	snap   atomic.Pointer[snapshot]
	loadMu sync.Mutex
	// lexStats bound the value lookup on large catalogs (hybrid.go).
	lexStats lexStatsCache
	// lexIndex is the BM25F index of the lexical list (bm25.go).
	lexIndex lexIndexCache
	vocab    *vocab.Lexicon
	// learn is the examples and glossary (learning.go).
	learn learningCache
}

// New returns a retriever over the catalog in db. The pool should run
// SET hnsw.ef_search to at least Config.PerList on each connection (see
// ConfigurePool), or the vector list comes back short.
func New(db *pgxpool.Pool, cfg Config, opts Options) (*Retriever, error) {
	cfg = cfg.withDefaults()
	if cfg.Retain >= cfg.Window {
		return nil, fmt.Errorf("retriever: retention %d must be below window %d", cfg.Retain, cfg.Window)
	}
	r := &Retriever{db: db, cfg: cfg, log: opts.Logger, emb: opts.Embedder, sc: opts.Scorer, rw: opts.Rewriter}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	r.setVocabulary(opts.Vocabulary)
	lite, err := DefaultLiteModel()
	if err != nil {
		return nil, fmt.Errorf("retriever: %w", err)
	}
	if lm, ok := opts.Scorer.(*LiteModel); ok {
		lite = lm
	}
	r.lite = lite
	if r.sc == nil {
		r.sc = lite
	}
	if lm, ok := r.sc.(*LiteModel); ok {
		r.abstainer = lm.Abstain
	}
	r.cfg.Expansion = cfg.Expansion.withDefaults(lite)
	return r, nil
}

// ConfigurePool prepares a pgxpool config for the retriever: registers
// nothing global, only raises hnsw.ef_search so an HNSW scan returns the
// n·k rows asked for (pgvector's default of 40 would cut the list).
func ConfigurePool(pc *pgxpool.Config, perList int) {
	if perList <= 0 {
		perList = 100
	}
	if pc.ConnConfig.RuntimeParams == nil {
		pc.ConnConfig.RuntimeParams = map[string]string{}
	}
	pc.ConnConfig.RuntimeParams["hnsw.ef_search"] = fmt.Sprint(max(perList, 40))
}

// Config returns the effective configuration.
func (r *Retriever) Config() Config { return r.cfg }

// Errors a caller can provoke; each carries the SQLSTATE a client should see.
var (
	ErrEmptyQuestion   = &QuestionError{Code: "22023", Msg: "the question is empty"}
	ErrQuestionTooLong = &QuestionError{Code: "54000", Msg: "the question is too long"}
)

// QuestionError is a question the retriever refuses, with its SQLSTATE.
type QuestionError struct {
	Code string
	Msg  string
}

func (e *QuestionError) Error() string { return e.Msg }

// SQLState returns the SQLSTATE for clients.
func (e *QuestionError) SQLState() string { return e.Code }

// CatalogError says the catalog cannot serve retrieval (SQLSTATE 55000,
// object_not_in_prerequisite_state).
type CatalogError struct {
	Msg string
	Err error
}

func (e *CatalogError) Error() string {
	if e.Err != nil && !errors.Is(e.Err, ErrCatalogNotBuilt) {
		return e.Msg + ": " + e.Err.Error()
	}
	return e.Msg
}
func (e *CatalogError) Unwrap() error { return e.Err }

// SQLState returns the SQLSTATE for clients.
func (e *CatalogError) SQLState() string { return "55000" }

func classifyCatalogErr(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && (pe.Code == "42P01" || pe.Code == "3F000" || pe.Code == "42703") {
		return &CatalogError{Msg: ErrCatalogNotBuilt.Error(), Err: errors.Join(ErrCatalogNotBuilt, err)}
	}
	return err
}

// Result is what Retrieve found for a question.
type Result struct {
	Question       string
	CatalogVersion int64
	// Tables lists the chosen tables in rank order, then the best rejected
	// candidates (Chosen false).
	Tables []ResultTable
	// Threshold is ATR's threshold logit (window that finalised its rank).
	Threshold float64
	// JoinPaths connect the chosen tables.
	JoinPaths []JoinPath
	// Candidates is the hybrid stage's ranked list (top-k baselines).
	Candidates []*Candidate
	// ATR is ATR's selection before expansion (empty when it abstained).
	ATR []*TableInfo
	// Abstained is true when nothing is chosen because no table answers:
	// Algorithm 1 selected nothing, or its best table fell below
	// Config.AbstainFloor or Config.AbstainCoverage (or, when set, both
	// bars of Config.AbstainEvidence). Tables still lists the
	// closest candidates (Chosen false, with their logits) so a caller can
	// name them.
	Abstained bool
	// AbstainReason says which rule abstained, in words a user can act on
	// ("the best table scored -1.62, below the abstention floor -1.5");
	// empty unless Abstained.
	AbstainReason string
	// Selected is Algorithm 1's selection before abstention; BestLogit is
	// its best logit and Coverage the share of the question's content
	// words it names (what abstention judges; -Inf and 0 when empty).
	// With an abstention model (LiteModel.Abstain) BestLogit and Coverage
	// are of that model's own selection, which Selected is not.
	Selected  []*TableInfo
	BestLogit float64
	Coverage  float64
	// BestCosine is the best raw question–table embedding cosine among
	// the selection (-Inf when empty; 0 without an embedding): the
	// absolute signal of Config.AbstainEvidence.
	BestCosine float64
	// BestWordCosine is the best word-vector cosine (the word-vector
	// leg's) among the selection: the signal of AbstainEvidence.Word. It
	// is 1 when the question or every selected table lacks a vector (no
	// evidence of distance), 0 when the selection is empty.
	BestWordCosine float64
	// Ranked is every candidate in ATR's final order with its logit and
	// threshold (diagnostics).
	Ranked []*Scored
	// Rewrites are the question words the scorer saw in the candidates'
	// words (Config.SchemaRewrite), in question order.
	Rewrites []Rewrite
	// Timings per stage.
	Timings Timings

	// Examples are the curated examples closest to the question, most
	// similar first (RetrieveAsk); an Exact one may be reused.
	Examples []ExampleHit
	// Glossary are the reviewed glossary terms the question names.
	Glossary []GlossaryHit
	// Previous is the turn the question followed up, when RetrieveAsk
	// was given one.
	Previous *Turn
	// NearestExample is the similarity of the closest example's question
	// (0 when there is none), listed or not.
	NearestExample float64
}

// ResultTable is one table of a Result.
type ResultTable struct {
	Rank  int
	Table *TableInfo
	// Score is the scorer's logit (the threshold is Result.Threshold; for
	// tables from expansion or multi-hop, the logit they got when scored).
	Score  float64
	Chosen bool
	// Reasons: lexical, vector, value, vocabulary, join, bridge, multihop.
	Reasons []string
	// Values are value-index entries the question mentions.
	Values []ValueHit
	// JoinPaths are the conditions joining this table to the others.
	JoinPaths []JoinPath
}

// Timings records how long each stage took.
type Timings struct {
	Embed, Hybrid, ATR, Expand, Multihop, Total time.Duration
	Windows                                     int
}

// Chosen returns the chosen tables.
func (r *Result) Chosen() []ResultTable {
	var out []ResultTable
	for _, t := range r.Tables {
		if t.Chosen {
			out = append(out, t)
		}
	}
	return out
}

// rejectedShown is how many rejected candidates a Result lists.
const rejectedShown = 5

// Retrieve runs the pipeline for one question: hybrid candidates, ATR,
// expansion and (when configured) multi-hop.
func (r *Retriever) Retrieve(ctx context.Context, question string) (*Result, error) {
	return r.retrieve(ctx, Ask{Question: question}, nil)
}

func checkQuestion(q string, maxBytes int) (string, error) {
	q = strings.TrimSpace(q)
	if q == "" {
		return "", ErrEmptyQuestion
	}
	if len(q) > maxBytes {
		return "", &QuestionError{Code: ErrQuestionTooLong.Code, Msg: fmt.Sprintf("the question is %d bytes long; the limit is %d", len(q), maxBytes)}
	}
	if !utf8.ValidString(q) {
		return "", &QuestionError{Code: "22021", Msg: "the question is not valid UTF-8"}
	}
	return q, nil
}

// snapshot returns the current catalog snapshot, loading it when absent or
// when version (if non-zero) differs.
func (r *Retriever) snapshot(ctx context.Context, version int64) (*snapshot, error) {
	if s := r.snap.Load(); s != nil && (version == 0 || s.version == version) {
		return s, nil
	}
	r.loadMu.Lock()
	defer r.loadMu.Unlock()
	if s := r.snap.Load(); s != nil && (version == 0 || s.version == version) {
		return s, nil
	}
	v, emb, dim, err := catalogState(ctx, r.db)
	if err != nil {
		if errors.Is(err, ErrCatalogNotBuilt) {
			return nil, &CatalogError{Msg: ErrCatalogNotBuilt.Error(), Err: err}
		}
		return nil, err
	}
	if v == 0 {
		return nil, &CatalogError{Msg: ErrCatalogNotBuilt.Error(), Err: ErrCatalogNotBuilt}
	}
	if r.emb != nil && emb != "" && (emb != r.emb.Name() || (dim != 0 && dim != r.emb.Dimension())) {
		return nil, &CatalogError{Msg: fmt.Sprintf("the catalog was embedded with %s (dimension %d) but retrieval is configured with %s (dimension %d): configure the same embedder or re-run `atrium catalog sync`",
			emb, dim, r.emb.Name(), r.emb.Dimension())}
	}
	g, err := loadGraph(ctx, r.db)
	if err != nil {
		return nil, err
	}
	s := &snapshot{version: v, embedder: emb, dimension: dim, g: g, expand: r.lexIndex.expand, emb: r.vocab.Embeddings()}
	s.mu.tables = map[int64]*TableInfo{}
	r.snap.Store(s)
	r.log.Debug("catalog snapshot loaded", "version", v, "embedder", emb, "join_edges", len(g.best))
	return s, nil
}

// prepared is a question after the hybrid stage.
type prepared struct {
	q     *Query
	snap  *snapshot
	cands []*Candidate
	// learn is what the examples, the glossary and the previous turn say
	// (empty when learning is off).
	learn *learningEvidence
	// asked is the question as the user put it; q is what the scorer
	// sees, in the candidates' words where the vocabulary bridges them
	// (rewrites).
	asked    *Query
	rewrites []Rewrite
	// courtesyOnly: the question was only greetings, thanks or small talk
	// (stripCourtesy), so nothing was searched.
	courtesyOnly bool
}

func (r *Retriever) prepare(ctx context.Context, question string, prev *Turn, hooks *evalHooks, tm *Timings) (*prepared, error) {
	var extraIDs []int64
	var extraValues map[int64][]ValueHit
	keep := r.cfg.Candidates
	learning := true
	// The widest of the parameters asked for decides the candidates.
	widest := r.cfg.learningParams()
	if hooks != nil {
		extraIDs, extraValues = hooks.extraIDs, hooks.extraValues
		if hooks.keep > 0 {
			keep = hooks.keep
		}
		learning = !hooks.noLearning
		if len(hooks.learning) > 0 {
			widest = hooks.learning[0]
		}
		for _, lp := range hooks.learning {
			widest.gate = min(widest.gate, lp.gate)
			widest.neighbours = max(widest.neighbours, lp.neighbours)
			widest.spread = max(widest.spread, lp.spread)
		}
	}
	snap, err := r.snapshot(ctx, 0)
	if err != nil {
		return nil, err
	}
	stats, err := r.lexStats.get(ctx, r.db, snap.version)
	if err != nil {
		return nil, err
	}
	ix, err := r.lexIndex.get(ctx, r.db, snap.version, stats.tables, r.log)
	if err != nil {
		return nil, err
	}
	// Greetings and thanks around a question are said to the listener;
	// the analysis, the embedding and the examples see the rest. A
	// question that is nothing else gets no candidates, and finish
	// abstains for that reason.
	if question = stripCourtesy(question); question == "" {
		q := newQuery("", nil, snap.g)
		return &prepared{q: q, asked: q, snap: snap, learn: &learningEvidence{}, courtesyOnly: true}, nil
	}
	question = readMagnitudes(question)
	t0 := time.Now()
	var emb []float32
	if r.emb != nil && snap.dimension > 0 {
		vs, err := r.emb.Embed(ctx, []string{question})
		if err != nil {
			return nil, fmt.Errorf("embed question: %w", err)
		}
		if len(vs) == 1 {
			emb = vs[0]
		}
	}
	t1 := time.Now()
	tm.Embed = t1.Sub(t0)
	q := newQuery(question, emb, snap.g)
	q.setExpansions(r.vocab, r.cfg.QuestionExpansion)
	p := hybridParams{perList: r.cfg.PerList, valueRows: r.cfg.ValueRows, alpha: r.cfg.Alpha, valueW: r.cfg.ValueWeight, keep: keep, stats: stats,
		index: ix, terms: questionTerms(q, r.vocab, r.cfg.QuestionExpansion)}
	ev := &learningEvidence{}
	var li *learningIndex
	var prevIDs map[int64]bool
	if learning {
		if prevIDs, err = r.previousTables(ctx, prev); err != nil {
			return nil, err
		}
		// The cached index serves the question; the candidate query reads
		// both versions, and a change (rare: a DBA edited an example or the
		// glossary, or a sync ran) reloads it and asks again.
		if li, err = r.learningIndex(ctx, 0, 0); err != nil {
			return nil, err
		}
		ev = li.match(q, prevIDs)
	}
	lids := ev.candidateIDs(widest)
	p.force = idSet(lids)
	raws, version, lv, err := r.fetchCandidates(ctx, q, p, append(append([]int64(nil), extraIDs...), lids...))
	if err != nil {
		return nil, err
	}
	if learning && (lv != li.version || version != li.catalog) {
		if li, err = r.learningIndex(ctx, lv, version); err != nil {
			return nil, err
		}
		ev = li.match(q, prevIDs)
		lids = ev.candidateIDs(widest)
		p.force = idSet(lids)
		if raws, version, _, err = r.fetchCandidates(ctx, q, p, append(append([]int64(nil), extraIDs...), lids...)); err != nil {
			return nil, err
		}
	}
	if version != 0 && version != snap.version {
		if snap, err = r.snapshot(ctx, version); err != nil {
			return nil, err
		}
		q.g = snap.g
		// The lexical list and scores came from the older version's
		// index, which has no entry for a table added since: that table
		// would compete on its vector alone. Rank again with the new
		// version's (on large catalogs get may still return the old one
		// while the new one builds; then there is nothing to redo).
		if stats, err = r.lexStats.get(ctx, r.db, snap.version); err != nil {
			return nil, err
		}
		if ix, err = r.lexIndex.get(ctx, r.db, snap.version, stats.tables, r.log); err != nil {
			return nil, err
		}
		if ix != p.index || stats != p.stats {
			p.stats, p.index = stats, ix
			if raws, _, _, err = r.fetchCandidates(ctx, q, p, append(append([]int64(nil), extraIDs...), lids...)); err != nil {
				return nil, err
			}
		}
	}
	if hooks != nil && (hooks.pool != nil || hooks.exclude != nil) {
		kept := raws[:0]
		for _, rc := range raws {
			if (hooks.pool == nil || hooks.pool[rc.id]) && !hooks.exclude[rc.id] {
				kept = append(kept, rc)
			}
		}
		raws = kept
	}
	ids := make([]int64, len(raws))
	for i, rc := range raws {
		ids[i] = rc.id
		if extraValues != nil {
			raws[i].values = append(raws[i].values, extraValues[rc.id]...)
		}
	}
	tables, err := snap.tables(ctx, r.db, ids)
	if err != nil {
		return nil, err
	}
	cands := combine(q, raws, tables, p)
	asked := q
	var rws []Rewrite
	if r.cfg.SchemaRewrite > 0 {
		var q2 *Query
		if q2, rws = rewriteToSchema(q, cands, r.vocab, r.cfg.QuestionExpansion, r.cfg.SchemaRewrite); q2 != q {
			// The hybrid evidence (scores, ranks) the scorer reads is
			// recomputed as if the question had said the schema's words,
			// over the same union of tables (the one every expansion
			// found), whose best C are chosen again. Without the
			// in-process index (a large catalog's is still being built)
			// the SQL's lexical scores stand.
			if p.index != nil {
				scores := p.index.score(rewrittenTerms(p.terms, rws))
				for i := range raws {
					raws[i].lex = p.index.scoreOf(scores, raws[i].id)
				}
				cands = combine(q, raws, tables, p)
			}
			schemaCoverage(q2, cands)
			q = q2
		}
	}
	tm.Hybrid = time.Since(t1)
	return &prepared{q: q, asked: asked, snap: snap, cands: cands, learn: ev, rewrites: rws}, nil
}

func idSet(ids []int64) map[int64]bool {
	if len(ids) == 0 {
		return nil
	}
	m := make(map[int64]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}

func (r *Retriever) retrieve(ctx context.Context, a Ask, hooks *evalHooks) (*Result, error) {
	start := time.Now()
	question, err := checkQuestion(a.Question, r.cfg.MaxQuestionBytes)
	if err != nil {
		return nil, err
	}
	res := &Result{Question: question, Previous: a.Previous}
	p, err := r.prepare(ctx, question, a.Previous, hooks, &res.Timings)
	if err != nil {
		return nil, err
	}
	lp := r.cfg.learningParams()
	if hooks != nil && len(hooks.learning) > 0 {
		lp = hooks.learning[0]
	}
	return r.finish(ctx, res, p, hooks, lp, start)
}

// finish runs ATR, abstention, expansion and multi-hop over a prepared
// question with the learning parameters lp.
func (r *Retriever) finish(ctx context.Context, res *Result, p *prepared, hooks *evalHooks, lp learningParams, start time.Time) (*Result, error) {
	res.CatalogVersion = p.snap.version
	res.Candidates = p.cands
	res.Examples, res.Glossary = p.learn.hits()
	res.NearestExample = p.learn.nearest
	res.Rewrites = p.rewrites
	bonus, learnReasons, other := p.learn.bonuses(lp)
	sc := r.sc
	if len(bonus) > 0 || other != 0 {
		sc = bonusScorer{Scorer: r.sc, bonus: bonus, other: other, spare: p.learn.namedBeyondExample(p.asked),
			explained: p.learn.glossaryExplained(p.asked)}
	}

	t := time.Now()
	atr, err := r.runATR(ctx, sc, p)
	if err != nil {
		return nil, err
	}
	// A separate abstention model (LiteModel.Abstain) runs Algorithm 1
	// itself; its verdict decides, and this run's selection is what a
	// question it answers gets.
	decide := atr
	if r.abstainer != nil {
		asc := Scorer(r.abstainer)
		if b, ok := sc.(bonusScorer); ok {
			b.Scorer = asc
			asc = b
		}
		if decide, err = r.runATR(ctx, asc, p); err != nil {
			return nil, err
		}
	}
	res.Timings.ATR = time.Since(t)
	res.Timings.Windows = atr.Windows
	res.Threshold = atr.Threshold
	res.Ranked = atr.Ranked
	// Abstention comes before expansion: expanding an empty set keeps it
	// empty, and a weak best table must not pull in its join neighbours.
	// Coverage is judged on the user's words (a rewritten word is named
	// by construction) through the same bridge as before.
	if *r.cfg.TopWhenEmpty && decide.Selected == 0 && len(decide.Ranked) > 0 {
		decide.Selected = 1
	}
	ab := abstain(p.asked, decide, *r.cfg.AbstainFloor, *r.cfg.AbstainCoverage, r.cfg.AbstainCoverageCosine, r.cfg.AbstainEvidence)
	if p.courtesyOnly {
		ab.why = courtesyReason
	}
	res.BestLogit, res.Coverage, res.BestCosine, res.BestWordCosine = ab.best, ab.coverage, ab.cosine, ab.wordCos
	if ab.abstain && p.learn.overridesAbstention(decide, *r.cfg.AbstainFloor, learnReasons) {
		ab.abstain = false
	}
	// A question found answerable is not left with nothing chosen: the
	// best ranked table stands for an empty selection. (With one run this
	// is only TopWhenEmpty's case, met above; an abstention model may
	// answer where the ranking run selected nothing.)
	if !ab.abstain && atr.Selected == 0 && len(atr.Ranked) > 0 {
		atr.Selected = 1
	}
	for _, s := range atr.Ranked[:atr.Selected] {
		res.Selected = append(res.Selected, s.Table)
	}
	if ab.abstain {
		atr.Selected = 0
		res.Abstained = true
		res.AbstainReason = ab.why
	}
	for _, s := range atr.Ranked[:atr.Selected] {
		res.ATR = append(res.ATR, s.Table)
	}

	t = time.Now()
	cfg := r.cfg.Expansion
	if hooks != nil && hooks.expansion != nil {
		cfg = hooks.expansion.withDefaults(r.lite)
	}
	var ex *expansion
	if cfg.Disabled {
		ex = &expansion{reason: map[int64]string{}, info: map[int64]*TableInfo{}}
		ex.chosen = atr.Ranked[:atr.Selected]
		in := map[int64]bool{}
		for _, s := range atr.Ranked {
			ex.info[s.Table.ID] = s.Table
		}
		for _, s := range ex.chosen {
			in[s.Table.ID] = true
		}
		ex.paths = joinPaths(p.snap.g, in, ex.info, cfg.MinEdgeScore, nil)
	} else {
		ex, err = expand(p.q, atr.Ranked, atr.Selected, p.snap.g, cfg, func(ids []int64) (map[int64]*TableInfo, error) {
			return p.snap.tables(ctx, r.db, ids)
		})
		if err != nil {
			return nil, err
		}
	}
	res.Timings.Expand = time.Since(t)

	if r.cfg.Multihop.Enabled && r.rw != nil {
		t = time.Now()
		if err := r.multihop(ctx, p, ex); err != nil {
			return nil, err
		}
		res.Timings.Multihop = time.Since(t)
	}
	keepPinned(ex, atr, p.learn.pinned, p.snap.g, cfg.MinEdgeScore)
	r.assemble(res, p.q, atr, ex)
	for i := range res.Tables {
		for _, why := range learnReasons[res.Tables[i].Table.ID] {
			if !containsString(res.Tables[i].Reasons, why) {
				res.Tables[i].Reasons = append(res.Tables[i].Reasons, why)
			}
		}
	}
	res.Timings.Total = time.Since(start)
	return res, nil
}

// runATR is Algorithm 1 with sc over p's candidates, with the glossary's
// tables (DBAs named them for the term), an exactly matching example's and
// the conversation's previous tables pinned into the selection.
func (r *Retriever) runATR(ctx context.Context, sc Scorer, p *prepared) (*atrResult, error) {
	atr, err := adaptiveRetrieve(ctx, sc, p.q, p.cands, r.cfg.Window, r.cfg.Retain)
	if err != nil {
		return nil, err
	}
	pinSelected(atr, p.learn.pinned)
	p.learn.pinExact(atr)
	p.learn.keepPrevious(atr)
	return atr, nil
}

// assemble turns the stages' output into the Result rows.
func (r *Retriever) assemble(res *Result, q *Query, atr *atrResult, ex *expansion) {
	res.JoinPaths = ex.paths
	pathsOf := map[int64][]JoinPath{}
	for _, jp := range ex.paths {
		pathsOf[jp.From.ID] = append(pathsOf[jp.From.ID], jp)
		pathsOf[jp.To.ID] = append(pathsOf[jp.To.ID], jp)
	}
	in := map[int64]bool{}
	rank := 0
	rewritten := map[string]bool{}
	for _, rw := range res.Rewrites {
		rewritten[stem(rw.To)] = true
	}
	add := func(t *TableInfo, s *Scored, chosen bool, extra string) {
		rank++
		rt := ResultTable{Rank: rank, Table: t, Chosen: chosen}
		if s != nil {
			rt.Score = s.Logit
			rt.Reasons = reasonsFor(q, s.Candidate)
			rt.Values = s.Values
			if len(rewritten) > 0 {
				for st := range ownStems(t) {
					if rewritten[st] {
						rt.Reasons = append(rt.Reasons, ReasonVocabulary)
						break
					}
				}
			}
		}
		if extra != "" {
			rt.Reasons = append(rt.Reasons, extra)
		}
		if chosen {
			rt.JoinPaths = pathsOf[t.ID]
		}
		res.Tables = append(res.Tables, rt)
	}
	for _, s := range ex.chosen {
		in[s.Table.ID] = true
		add(s.Table, s, true, ex.reason[s.Table.ID])
	}
	for _, t := range ex.bridges {
		in[t.ID] = true
		add(t, nil, true, ReasonBridge)
	}
	shown := 0
	for _, s := range atr.Ranked {
		if shown >= rejectedShown {
			break
		}
		if in[s.Table.ID] {
			continue
		}
		shown++
		add(s.Table, s, false, "")
	}
}

// evalHooks let evaluation and training steer one retrieval.
type evalHooks struct {
	extraIDs    []int64
	extraValues map[int64][]ValueHit
	expansion   *ExpansionConfig
	keep        int // candidates kept (training takes 100 and halves them)
	// pool, when set, restricts the candidates to these tables: training
	// draws catalogs of a deployment-like size from the training databases.
	pool map[int64]bool
	// exclude removes these tables from the candidates (an unanswerable
	// set asks a question against the pool without its own database).
	exclude map[int64]bool
	// noLearning leaves the examples, the glossary and the previous turn
	// out (training; evaluation's baseline).
	noLearning bool
	// learning, when set, replaces the configured example parameters;
	// more than one asks for one result per entry (RetrieveGrid).
	learning []learningParams
}

// setVocabulary sets the lexicon (nil: the embedded one) and the index-time
// identifier expansion that comes with it.
func (r *Retriever) setVocabulary(lx *vocab.Lexicon) {
	if lx == nil {
		lx = vocab.Default()
	}
	r.vocab = lx
	r.lexIndex.expand = identifierExpander(lx)
	r.lexIndex.emb = lx.Embeddings()
}
