package retriever

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/atriumdb/atrium/retriever/vocab"
)

// This file is the narrow surface that training (retriever/atrtrain) and
// evaluation (retriever/evaluate) use to drive the serving pipeline's own
// stages, so that features, candidate lists and Algorithm 1 mean exactly the
// same at training time as at inference. Nothing here is used by serving.

// Feature vector sizes of the lite scorer and the threshold-feature slot
// holding the window's table logits (max, second, mean), filled per window
// by SetLogitStats.
const (
	NumPairFeatures   = numPairFeatures
	NumThreshFeatures = numThreshFeatures
	ThreshLogitSlot   = threshLogitSlot
	// LiteFormat is the format tag of a lite weights file of this build.
	LiteFormat = liteFormat
)

// CandidateOptions steer one candidate search for training.
type CandidateOptions struct {
	// ExtraIDs are tables scored besides the ranked lists' union.
	ExtraIDs []int64
	// ExtraValues are value hits added to these tables (training's
	// leave-one-out stand-in for a value index).
	ExtraValues map[int64][]ValueHit
	// Keep is how many candidates are kept (0: Config.Candidates).
	Keep int
	// Pool, when set, restricts the candidates to these tables.
	Pool map[int64]bool
}

// Prepared is a question after the hybrid stage.
type Prepared struct {
	Query      *Query
	Candidates []*Candidate
	g          *graph
}

// PrepareCandidates runs the hybrid stage for question with opts.
func (r *Retriever) PrepareCandidates(ctx context.Context, question string, opts CandidateOptions) (*Prepared, error) {
	question, err := checkQuestion(question, r.cfg.MaxQuestionBytes)
	if err != nil {
		return nil, err
	}
	// Training sees no examples: they belong to a deployment.
	hooks := &evalHooks{extraIDs: opts.ExtraIDs, extraValues: opts.ExtraValues, keep: opts.Keep, pool: opts.Pool, noLearning: true}
	var tm Timings
	p, err := r.prepare(ctx, question, nil, hooks, &tm)
	if err != nil {
		return nil, err
	}
	return &Prepared{Query: p.q, Candidates: p.cands, g: p.snap.g}, nil
}

// TableIDs maps every catalogued "schema.table" (lower case) to its id.
func (r *Retriever) TableIDs(ctx context.Context) (map[string]int64, error) {
	rows, err := r.db.Query(ctx, `SELECT id, lower(schema_name), lower(table_name) FROM atrium.tables`)
	if err != nil {
		return nil, fmt.Errorf("list catalog tables: %w", classifyCatalogErr(err))
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var id int64
		var s, t string
		if err := rows.Scan(&id, &s, &t); err != nil {
			return nil, fmt.Errorf("list catalog tables: %w", err)
		}
		out[s+"."+t] = id
	}
	return out, rows.Err()
}

// EmbedderName names the question embedder ("" when none).
func (r *Retriever) EmbedderName() string {
	if r.emb == nil {
		return ""
	}
	return r.emb.Name()
}

// NewForTraining builds a retriever whose scorer is irrelevant (training
// only uses the hybrid stage), so it works before any weights exist.
func NewForTraining(pool *pgxpool.Pool, emb Embedder) *Retriever {
	return NewForTrainingVocab(pool, emb, nil)
}

// NewForTrainingVocab is NewForTraining with the lexicon lx (nil: the
// embedded one); the trainer uses it to give each fold of training
// databases learned pairs mined without that fold.
func NewForTrainingVocab(pool *pgxpool.Pool, emb Embedder, lx *vocab.Lexicon) *Retriever {
	placeholder := &LiteModel{}
	r := &Retriever{db: pool, cfg: Config{}.withDefaults(), emb: emb, sc: placeholder, lite: placeholder}
	r.log = slog.New(slog.DiscardHandler)
	r.setVocabulary(lx)
	return r
}

// QueryTerms are the words of question the candidate SQL's value search
// would look up (stopwords and bare numbers dropped, longer than one letter).
func QueryTerms(question string) map[string]bool {
	qa := newQuery(question, nil, nil)
	terms := map[string]bool{}
	for _, w := range tsqueryTerms(qa.terms, false) {
		if len(w) > 1 {
			terms[w] = true
		}
	}
	return terms
}

// Renumber copies a slice of candidates with ranks renumbered from 1, as a
// list of its own (schema coverage recomputed over it, as combine does for a
// list of C).
func Renumber(q *Query, cs []*Candidate) []*Candidate {
	out := make([]*Candidate, len(cs))
	for i, c := range cs {
		cc := *c
		cc.Rank = i + 1
		cc.schemaCov, cc.schemaBest = 0, 0
		cc.stats, cc.statsQ = nil, nil
		out[i] = &cc
	}
	schemaCoverage(q, out)
	return out
}

// WindowFeatures is the lite scorer's feature definition for one window:
// per-pair vectors and the threshold vector (logit slots zero).
func WindowFeatures(q *Query, win []*Candidate) (pair [][]float64, thr []float64) {
	return windowFeatures(q, win)
}

// SetLogitStats fills the threshold vector's window-logit slots.
func SetLogitStats(thr, logits []float64) { setLogitStats(thr, logits) }

// PairLogit is the lite model's table logit for the raw features f; x and h
// receive the standardised input and the hidden activations.
func (m *LiteModel) PairLogit(f, x, h []float64) float64 { return m.pairLogit(f, x, h) }

// ThreshLogit is the lite model's threshold logit for the threshold features
// t, before the shipped bias and relative cut.
func (m *LiteModel) ThreshLogit(t []float64) float64 { return m.threshLogit(t) }

// ATRRun is Algorithm 1's outcome for one candidate list, with the trace
// that lets training replay it under other threshold shifts.
type ATRRun struct {
	// Ranked is every candidate in ATR's final order, best first.
	Ranked []*Scored
	// Selected is how many leading entries of Ranked outrank the threshold.
	Selected int
	trace    []windowTrace
}

// RunATR runs Algorithm 1 with scorer s over cands (window W, retain R).
func RunATR(ctx context.Context, s Scorer, q *Query, cands []*Candidate, W, R int) (*ATRRun, error) {
	res, err := adaptiveRetrieve(ctx, s, q, cands, W, R)
	if err != nil {
		return nil, err
	}
	return &ATRRun{Ranked: res.Ranked, Selected: res.Selected, trace: res.trace}, nil
}

// SelectedWith is how many tables Algorithm 1 would have returned with every
// threshold logit shifted by bias and raised by the relative cut: the
// windows depend on the table logits only, so this equals a real run.
func (a *ATRRun) SelectedWith(R int, bias, cut float64) int {
	return thresholdRank(a.trace, R, bias, cut, len(a.Ranked))
}

// ExpandRun applies join expansion with cfg to an ATR run over p's
// candidates. Bridge tables outside the candidate list are not looked up.
func (p *Prepared) ExpandRun(run *ATRRun, cfg ExpansionConfig) ([]*Scored, error) {
	ex, err := expand(p.Query, run.Ranked, run.Selected, p.g, cfg, func([]int64) (map[int64]*TableInfo, error) { return nil, nil })
	if err != nil {
		return nil, err
	}
	return ex.chosen, nil
}

// WithDefaults fills unset margins from m's trained ones (nil: built-in).
func (c ExpansionConfig) WithDefaults(m *LiteModel) ExpansionConfig { return c.withDefaults(m) }

// WithDefaults returns c with every unset field at its default.
func (c Config) WithDefaults() Config { return c.withDefaults() }

// RetrieveOptions steer one evaluation retrieval.
type RetrieveOptions struct {
	// Exclude removes these tables from the candidates: a question asked
	// against the pool without its own database.
	Exclude map[int64]bool
	// Pool, when set, restricts the candidates to these tables.
	Pool map[int64]bool
	// NoLearning leaves the examples and the glossary out: the same
	// pipeline as a catalog without them.
	NoLearning bool
}

// RetrieveWith is Retrieve with opts applied to the candidate stage.
func (r *Retriever) RetrieveWith(ctx context.Context, question string, opts RetrieveOptions) (*Result, error) {
	return r.retrieve(ctx, Ask{Question: question}, &evalHooks{exclude: opts.Exclude, pool: opts.Pool, noLearning: opts.NoLearning})
}

// ExampleParams are example-evidence settings to try (Config.ExampleWeight
// and Config.ExampleGate; 0 weight: none).
type ExampleParams struct {
	Weight, Gate, Penalty float64
	// Neighbours and Spread: how many of the most similar examples lend
	// their tables, and how far below the best one (0: defaults).
	Neighbours int
	Spread     float64
	// PenaltyGate is the least similarity at which the penalty applies
	// (0: the gate).
	PenaltyGate float64
}

// RetrieveGrid runs the candidate stage once and the rest of the pipeline
// once per entry of grid: tuning the example parameters on training
// questions without a candidate query per setting.
func (r *Retriever) RetrieveGrid(ctx context.Context, question string, opts RetrieveOptions, grid []ExampleParams) ([]*Result, error) {
	start := time.Now()
	question, err := checkQuestion(question, r.cfg.MaxQuestionBytes)
	if err != nil {
		return nil, err
	}
	hooks := &evalHooks{exclude: opts.Exclude, pool: opts.Pool, noLearning: opts.NoLearning}
	for _, g := range grid {
		lp := r.cfg.learningParams()
		lp.weight, lp.gate, lp.penalty = g.Weight, g.Gate, g.Penalty
		if g.Neighbours > 0 {
			lp.neighbours = g.Neighbours
		}
		if g.Spread > 0 {
			lp.spread = g.Spread
		}
		lp.penaltyGate = g.PenaltyGate
		hooks.learning = append(hooks.learning, lp)
	}
	var tm Timings
	p, err := r.prepare(ctx, question, nil, hooks, &tm)
	if err != nil {
		return nil, err
	}
	out := make([]*Result, len(grid))
	for i, lp := range hooks.learning {
		res := &Result{Question: question, Timings: tm}
		if out[i], err = r.finish(ctx, res, p, hooks, lp, start); err != nil {
			return nil, err
		}
	}
	return out, nil
}
