package main

import (
	"context"
	"errors"
	"strings"

	"github.com/atriumdb/atrium/internal/querylog"
	"github.com/atriumdb/atrium/internal/telemetry"
	"github.com/atriumdb/atrium/proxy"
	"github.com/atriumdb/atrium/sqlgen"
)

// recorder turns each finished question's record (RETRIEVE, nl, nl-sql)
// into its query-log entry and its retrieval and LLM metrics: all of them
// come from the question's one sqlgen.Tracer. Its methods run on session
// goroutines and never block: the query log only queues.
type recorder struct {
	ops *ops
}

// question records a finished question.
func (r *recorder) question(_ context.Context, q sqlgen.QuestionRecord) {
	e := querylog.Entry{
		Time: q.Start, RequestID: q.RequestID, Database: q.Database, Role: q.Role,
		Application: q.Session.ApplicationName, Kind: q.Kind, Question: q.Question, Tables: q.Tables,
		Threshold: q.Threshold, SQL: q.SQL, Rows: q.Rows, Truncated: q.Truncated, Model: q.Model,
		PromptTokens: q.Usage.PromptTokens, CompletionTokens: q.Usage.CompletionTokens,
		RepairRounds: q.Repairs, Total: q.Total, Stages: q.Stages,
		ExampleID: q.ExampleID, FollowUpOf: q.FollowUpOf,
	}
	if q.Kind == sqlgen.KindRetrieve {
		e.Model = ""
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
	if rr := q.Retrieval; rr != nil {
		r.ops.Metrics.Retrieval.ObserveRetrieval(rr.Stages, rr.Chosen, rr.Err)
	}
	for _, c := range q.LLMCalls {
		r.ops.Metrics.LLM.ObserveCall(c.Purpose, c.Duration, llmErrorReason(c.Err))
	}
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
