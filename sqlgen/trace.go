package sqlgen

import (
	"context"
	"log/slog"
	"time"

	"github.com/atriumdb/atrium/internal/telemetry"
	"github.com/atriumdb/atrium/proxy"
)

// QuestionRecord describes one finished question of any form (RETRIEVE, nl,
// nl-sql): what the query log stores, what the metrics outside the
// pipeline count and what the question's log line says, all taken from
// one Tracer. Fields not reached (a question that failed before retrieval
// has no tables) are zero.
type QuestionRecord struct {
	// RequestID is the question's request id, the one its log lines carry.
	RequestID string
	// Start is when the question began; Total is how long it took.
	Start time.Time
	Total time.Duration
	// Session is the asking session (user, database, application).
	Session proxy.SessionInfo
	// Kind is KindNL (rows), KindNLSQL (the SQL only) or KindRetrieve.
	Kind     string
	Question string
	// Role and Database are the session's current_user and database as
	// the pipeline read them; empty when it failed before asking.
	Role, Database string
	// Tables are the chosen tables, schema-qualified, best first.
	Tables []string
	// Threshold is the retriever's ATR threshold; nil when retrieval did
	// not run (a cache hit) or reports none.
	Threshold *float64
	// CatalogVersion is the catalog version the question was keyed on (0:
	// unknown).
	CatalogVersion int64
	// SQL is the validated (or last rejected) SQL.
	SQL string
	// Err is what the client saw (nil: answered); SQLState its code.
	Err      error
	SQLState string
	// Rows is how many rows the client received; Truncated that
	// --nl-row-limit cut them.
	Rows      int64
	Truncated bool
	// CacheTier is "result" (rows from the cache), "sql" (cached SQL run
	// again), "shared" (another session's concurrent generation) or "".
	CacheTier string
	// Model identifies the generator and its options.
	Model string
	// Usage sums the tokens of every LLM call; Repairs counts repair
	// rounds.
	Usage   Usage
	Repairs int
	// Stages holds each stage's duration: retrieve (and the retriever's
	// own stages as retrieve_<stage>), sample, llm, validate, execute.
	Stages map[string]time.Duration
	// Retrieval is set when the question ran retrieval (not on a cache
	// hit, nor for a session that shared another's generation).
	Retrieval *RetrievalRecord
	// LLMCalls are the generator calls, in order.
	LLMCalls []LLMCall
	// CacheKey is the result cache key the answer was looked up and
	// stored under ("" when caching was off for it), so feedback that
	// marks the answer wrong can evict it.
	CacheKey string
	// ExampleID is the curated example (atrium.examples) whose SQL
	// answered without an LLM call; 0 otherwise.
	ExampleID int64
	// FollowUpOf is the request id of the session's previous question
	// when this one was answered as its follow-up; "" otherwise.
	FollowUpOf string
}

// RetrievalRecord is one retrieval of a question, for retrieval metrics.
type RetrievalRecord struct {
	// Stages are the retriever's own stage durations (candidates,
	// rerank, expand, multihop, total); nil when it failed.
	Stages map[string]time.Duration
	// Chosen is how many tables it chose that the asking role may read.
	Chosen int
	// Err is its error (a failed privilege check included).
	Err error
}

// LLMCall is one call to the generator.
type LLMCall struct {
	// Purpose is PurposeGenerate or PurposeRepair.
	Purpose  string
	Duration time.Duration
	Err      error
}

// Kinds of question, QuestionRecord.Kind.
const (
	KindNL       = "nl"
	KindNLSQL    = "nl_sql"
	KindRetrieve = "retrieve"
)

// Cache tiers of QuestionRecord.CacheTier.
const (
	TierResult = "result"
	TierSQL    = "sql"
	TierShared = "shared"
)

// LLM call purposes of LLMCall.Purpose.
const (
	PurposeGenerate = "generate"
	PurposeRepair   = "repair"
)

// Tracer is the one account of one execution of a question, for every
// question form. Each stage reports to it once, as it ends; from it come
// the pipeline's metrics (as each stage reports), and at Finish the
// question's one log line (with its request id) and the QuestionRecord
// handed to Options.OnQuestion, from which the query log and the metrics
// outside the pipeline (retrieval, LLM calls) are derived. It belongs to
// the asking session's goroutine.
type Tracer struct {
	p     *Pipeline
	rec   QuestionRecord
	begun bool
}

// Tracer starts the account of one question of the given kind (KindNL,
// KindNLSQL, KindRetrieve) asked by the session info describes. The
// question layer uses it for RETRIEVE; nl questions get theirs from their
// Statement.
func (p *Pipeline) Tracer(info proxy.SessionInfo, kind, question string) *Tracer {
	return &Tracer{p: p, rec: QuestionRecord{Session: info, Kind: kind, Question: question, Model: p.cfg.Model}}
}

// FollowUpOf records that the question follows up the session's previous
// question, whose request id is id.
func (t *Tracer) FollowUpOf(id string) { t.rec.FollowUpOf = id }

// Begin starts the trace when it has not started and returns ctx carrying
// the question's request id, so every log line of the question names it.
func (t *Tracer) Begin(ctx context.Context) context.Context {
	if !t.begun {
		t.begun = true
		ctx, t.rec.RequestID = telemetry.EnsureRequestID(ctx)
		t.rec.Start = time.Now()
		t.rec.Stages = map[string]time.Duration{}
		return ctx
	}
	return telemetry.WithRequestID(ctx, t.rec.RequestID)
}

// Stage records that a stage took d: in the stage histogram (nl forms) and
// the record.
func (t *Tracer) Stage(name string, d time.Duration) {
	if t.rec.Kind != KindRetrieve {
		t.p.m.stage.WithLabelValues(name).Observe(d.Seconds())
	}
	if t.rec.Stages == nil {
		t.rec.Stages = map[string]time.Duration{}
	}
	t.rec.Stages[name] += d
}

// Retrieved records a retrieval that took d (privilege check included):
// r is what the asking role may see of its result, nil when err.
func (t *Tracer) Retrieved(d time.Duration, r *Retrieval, err error) {
	t.Stage("retrieve", d)
	rr := &RetrievalRecord{Err: err}
	t.rec.Retrieval = rr
	if r == nil {
		return
	}
	rr.Stages, rr.Chosen = r.Stages, len(r.Tables)
	t.rec.Threshold = r.Threshold
	if t.rec.CatalogVersion == 0 {
		t.rec.CatalogVersion = r.CatalogVersion
	}
	for k, d := range r.Stages {
		t.rec.Stages["retrieve_"+k] += d
	}
	t.rec.Tables = make([]string, len(r.Tables))
	for i, tb := range r.Tables {
		t.rec.Tables[i] = tb.QualifiedName()
	}
}

// llmCall records one generator call.
func (t *Tracer) llmCall(purpose string, d time.Duration, u Usage, err error) {
	t.Stage("llm", d)
	t.rec.LLMCalls = append(t.rec.LLMCalls, LLMCall{Purpose: purpose, Duration: d, Err: err})
	if purpose == PurposeRepair {
		t.p.m.repairs.Inc()
		t.rec.Repairs++
	}
	t.rec.Usage.PromptTokens += u.PromptTokens
	t.rec.Usage.CompletionTokens += u.CompletionTokens
	t.rec.Usage.TotalTokens += u.TotalTokens
	t.p.m.tokens.WithLabelValues("prompt").Add(float64(u.PromptTokens))
	t.p.m.tokens.WithLabelValues("completion").Add(float64(u.CompletionTokens))
}

// Finish ends the account: err is what the client saw and rows how many
// rows it got. It writes the question's log line and hands the record to
// OnQuestion. A Tracer is finished once; later calls do nothing.
func (t *Tracer) Finish(ctx context.Context, err error, rows int64) {
	if t.rec.Kind == "" {
		return
	}
	rec := t.rec
	t.rec = QuestionRecord{}
	if !t.begun {
		rec.Start = time.Now()
	} else {
		rec.Total = time.Since(rec.Start)
	}
	rec.Err, rec.SQLState, rec.Rows = err, proxy.SQLState(err), rows
	if rec.Database == "" {
		rec.Database = rec.Session.Database
	}
	attrs := []slog.Attr{
		slog.String("kind", rec.Kind), slog.String("question", rec.Question), slog.Any("tables", rec.Tables),
		slog.Int64("rows", rec.Rows), slog.Duration("elapsed", rec.Total),
	}
	if rec.CacheTier != "" {
		attrs = append(attrs, slog.String("cache", rec.CacheTier))
	}
	if rec.SQL != "" {
		attrs = append(attrs, slog.String("sql", rec.SQL))
	}
	if len(rec.LLMCalls) > 0 {
		attrs = append(attrs, slog.Int("attempts", len(rec.LLMCalls)), slog.Int("prompt_tokens", rec.Usage.PromptTokens),
			slog.Int("completion_tokens", rec.Usage.CompletionTokens))
	}
	if err != nil {
		attrs = append(attrs, slog.String("sqlstate", rec.SQLState), slog.Any("err", err))
	}
	t.p.log.LogAttrs(ctx, slog.LevelInfo, "question finished", attrs...)
	if t.p.onQuestion != nil {
		t.p.onQuestion(ctx, rec)
	}
}
