package sqlgen

import (
	"context"
	"time"

	"github.com/atriumdb/atrium/internal/telemetry"
	"github.com/atriumdb/atrium/proxy"
)

// QuestionRecord describes one finished question: what the query log stores
// and what metrics count. Fields not reached (a question that failed before
// retrieval has no tables) are zero.
type QuestionRecord struct {
	// RequestID is the question's request id, the one its log lines carry.
	RequestID string
	// Start is when the question began; Total is how long it took.
	Start time.Time
	Total time.Duration
	// Session is the asking session (user, database, application).
	Session proxy.SessionInfo
	// Kind is "nl" (rows) or "nl_sql" (the SQL only).
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
}

// Cache tiers of QuestionRecord.CacheTier.
const (
	TierResult = "result"
	TierSQL    = "sql"
	TierShared = "shared"
)

// LLM call purposes reported to Options.OnLLMCall.
const (
	PurposeGenerate = "generate"
	PurposeRepair   = "repair"
)

// trace accumulates one execution of a question for its QuestionRecord.
// It belongs to the statement's session goroutine.
type trace struct {
	reqID     string
	start     time.Time
	stages    map[string]time.Duration
	usage     Usage
	repairs   int
	threshold *float64
	version   int64
	tier      string
	tables    []string
	sql       string
	done      bool // the record was emitted
}

// begin starts the trace when it has not started and returns ctx carrying
// the question's request id, so every log line of the question names it.
func (t *trace) begin(ctx context.Context) context.Context {
	if t.reqID == "" {
		ctx, t.reqID = telemetry.EnsureRequestID(ctx)
		t.start = time.Now()
		t.stages = map[string]time.Duration{}
		return ctx
	}
	return telemetry.WithRequestID(ctx, t.reqID)
}

func (t *trace) stage(name string, d time.Duration) {
	if t.stages != nil {
		t.stages[name] += d
	}
}

// retrieval records what the retriever reported.
func (t *trace) retrieval(r *Retrieval) {
	t.threshold = r.Threshold
	for k, d := range r.Stages {
		t.stage("retrieve_"+k, d)
	}
}
