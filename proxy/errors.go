package proxy

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5/pgproto3"
)

// SQLSTATEs the proxy itself reports.
const (
	codeProtocolViolation  = "08P01"
	codeConnectionFailure  = "08006"
	codeUnableToConnect    = "08001"
	codeFeatureNotSupp     = "0A000"
	codeTooManyConnections = "53300"
	codeProgramLimit       = "54000"
	codeInvalidAuthSpec    = "28000"
	codeQueryCanceled      = "57014"
	codeAdminShutdown      = "57P01"
	codeIdleSessionTimeout = "57P05"
	codeSystemError        = "58000"
	codeDuplicatePStmt     = "42P05"
	codeUndefinedPStmt     = "26000"
	codeUndefinedCursor    = "34000"

	codeCharacterNotInRepertoire = "22021"
	codeUntranslatableCharacter  = "22P05"
)

// errorResponse turns any error a Handler, Statement or Upstream returned
// into the ErrorResponse the client sees. It is the only place that decides
// what a client learns about a failure: internal error text is never sent.
func errorResponse(err error) *pgproto3.ErrorResponse {
	var pe *Error
	var ue *UpstreamError
	switch {
	case errors.As(err, &pe):
		return &pgproto3.ErrorResponse{Severity: "ERROR", SeverityUnlocalized: "ERROR", Code: pe.Code, Message: pe.Message, Detail: pe.Detail, Hint: pe.Hint}
	case errors.As(err, &ue):
		sev := ue.Severity
		if sev == "" || sev == "FATAL" || sev == "PANIC" {
			// The session, not the Statement, decides whether the
			// connection ends; a Statement's error never closes it.
			sev = "ERROR"
		}
		return &pgproto3.ErrorResponse{Severity: sev, SeverityUnlocalized: sev, Code: ue.Code, Message: ue.Message, Detail: ue.Detail, Hint: ue.Hint}
	case errors.Is(err, context.DeadlineExceeded):
		return &pgproto3.ErrorResponse{Severity: "ERROR", SeverityUnlocalized: "ERROR", Code: codeQueryCanceled, Message: "canceling statement due to statement timeout"}
	case errors.Is(err, context.Canceled):
		return &pgproto3.ErrorResponse{Severity: "ERROR", SeverityUnlocalized: "ERROR", Code: codeQueryCanceled, Message: "canceling statement due to user request"}
	default:
		return &pgproto3.ErrorResponse{Severity: "ERROR", SeverityUnlocalized: "ERROR", Code: codeSystemError, Message: "atrium could not answer the statement (see the proxy log)"}
	}
}

// SQLState is the SQLSTATE a client sees when a Handler, Statement or
// Upstream returns err: the code of an *Error or *UpstreamError, 57014 for
// cancellation and timeouts, 58000 for anything else, and "" for nil. Metrics
// and the query log use it so they agree with what the client was told.
func SQLState(err error) string {
	if err == nil {
		return ""
	}
	return errorResponse(err).Code
}

// fatal builds a FATAL ErrorResponse, sent just before the proxy closes a
// connection.
func fatal(code, msg, hint string) *pgproto3.ErrorResponse {
	return &pgproto3.ErrorResponse{Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: code, Message: msg, Hint: hint}
}

func upstreamErrorFrom(e *pgproto3.ErrorResponse) *UpstreamError {
	sev := e.SeverityUnlocalized
	if sev == "" {
		sev = e.Severity
	}
	return &UpstreamError{Severity: sev, Code: e.Code, Message: e.Message, Detail: e.Detail, Hint: e.Hint}
}
