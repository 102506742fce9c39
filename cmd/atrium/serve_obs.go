package main

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/atriumdb/atrium/internal/querylog"
	"github.com/atriumdb/atrium/internal/telemetry"
	"github.com/atriumdb/atrium/proxy"
	"github.com/atriumdb/atrium/question"
	"github.com/atriumdb/atrium/retriever"
	"github.com/atriumdb/atrium/sqlgen"
)

// recorder turns finished questions, RETRIEVEs and LLM calls into query-log
// entries and metrics. Its methods run on session goroutines and never
// block: the query log only queues.
type recorder struct {
	ops *ops
	log *slog.Logger
}

// question records a finished natural-language question.
func (r *recorder) question(ctx context.Context, q sqlgen.QuestionRecord) {
	e := querylog.Entry{
		Time: q.Start, RequestID: q.RequestID, Database: q.Database, Role: q.Role,
		Application: q.Session.ApplicationName, Kind: q.Kind, Question: q.Question, Tables: q.Tables,
		Threshold: q.Threshold, SQL: q.SQL, Rows: q.Rows, Truncated: q.Truncated, Model: q.Model,
		PromptTokens: q.Usage.PromptTokens, CompletionTokens: q.Usage.CompletionTokens,
		RepairRounds: q.Repairs, Total: q.Total, Stages: q.Stages,
	}
	if e.Role == "" {
		e.Role = q.Session.User
	}
	if q.CatalogVersion != 0 {
		v := q.CatalogVersion
		e.CatalogVersion = &v
	}
	switch q.CacheTier {
	case sqlgen.TierResult:
		e.CacheHit, e.CacheTier = true, telemetry.TierResult
	case sqlgen.TierSQL:
		e.CacheHit, e.CacheTier = true, telemetry.TierSQL
	}
	e.Status, e.SQLState, e.Error = outcome(q.Err)
	r.ops.LogQuestion(e)
	if q.Err != nil {
		r.log.DebugContext(ctx, "question failed", "question", q.Question, "sqlstate", e.SQLState, "err", q.Err)
	}
}

// retrieval records the metrics of one retrieval, for RETRIEVE and
// questions alike.
func (r *recorder) retrieval(_ context.Context, res *retriever.Result, err error) {
	var stages map[string]time.Duration
	chosen := 0
	if res != nil {
		stages = question.Stages(res.Timings)
		chosen = len(res.Chosen())
	}
	r.ops.Metrics.Retrieval.ObserveRetrieval(stages, chosen, err)
}

// retrieve records a RETRIEVE statement in the query log.
func (r *recorder) retrieve(ctx context.Context, ev question.RetrieveEvent) {
	e := querylog.Entry{
		Time: ev.Start, RequestID: ev.RequestID, Database: ev.Session.Database, Role: ev.Session.User,
		Application: ev.Session.ApplicationName, Kind: querylog.KindRetrieve, Question: ev.Question,
		Rows: int64(ev.Rows), Total: ev.Duration,
	}
	if res := ev.Result; res != nil {
		th := res.Threshold
		e.Threshold = &th
		v := res.CatalogVersion
		if v != 0 {
			e.CatalogVersion = &v
		}
		for _, t := range res.Chosen() {
			if t.Table != nil {
				e.Tables = append(e.Tables, t.Table.QualifiedName())
			}
		}
		e.Stages = map[string]time.Duration{}
		for k, d := range question.Stages(res.Timings) {
			e.Stages["retrieve_"+k] = d
		}
	}
	e.Status, e.SQLState, e.Error = outcome(ev.Err)
	r.ops.LogQuestion(e)
}

// llmCall records one call to the SQL generator's endpoint.
func (r *recorder) llmCall(_ context.Context, purpose string, d time.Duration, err error) {
	r.ops.Metrics.LLM.ObserveCall(purpose, d, llmErrorReason(err))
}

// outcome maps what the client saw to the query log's status, SQLSTATE and
// message.
func outcome(err error) (status, sqlstate, msg string) {
	if err == nil {
		return querylog.StatusOK, "", ""
	}
	sqlstate = proxy.SQLState(err)
	status = querylog.StatusError
	if errors.Is(err, context.Canceled) || sqlstate == "57014" {
		status = querylog.StatusCancelled
	}
	var pe *proxy.Error
	var ue *proxy.UpstreamError
	switch {
	case errors.As(err, &pe):
		msg = pe.Message
	case errors.As(err, &ue):
		msg = ue.Message
	default:
		msg = err.Error()
	}
	return status, sqlstate, msg
}

// llmErrorReason is the reason label of atrium_llm_errors_total; "" for
// success.
func llmErrorReason(err error) string {
	if err == nil {
		return ""
	}
	var le *sqlgen.LLMError
	switch {
	case errors.As(err, &le) && le.Timeout, errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case le == nil:
		return "other"
	case le.Status == 429:
		return "http_429"
	case le.Status >= 500:
		return "http_5xx"
	case le.Status >= 400:
		return "http_4xx"
	case le.Status == 0 && strings.Contains(strings.ToLower(le.Msg), "decode"):
		return "decode"
	case le.Status == 0:
		return "transport"
	}
	return "other"
}
