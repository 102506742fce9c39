package sqlgen

import (
	"errors"

	"github.com/atriumdb/atrium/proxy"
)

// SQLSTATEs of the errors a question can end with. Class 08 (connection
// exception) is deliberately avoided even for an unreachable LLM: JDBC pools
// (HikariCP) and other drivers treat class 08 as a dead connection and
// discard the session, but the session is fine and stays usable.
const (
	// CodeSyntax (42601 syntax_error): the generated text is not SQL that
	// parses, or the question is empty.
	CodeSyntax = "42601"
	// CodeNotReadOnly (0A000 feature_not_supported): the generated SQL is not
	// exactly one read-only SELECT (several statements, DML, DDL, SET, COPY,
	// transaction control, locking clauses, SELECT INTO, a function with side
	// effects).
	CodeNotReadOnly = "0A000"
	// CodeNoLLM (55000 object_not_in_prerequisite_state): no --llm-url is
	// configured.
	CodeNoLLM = "55000"
	// CodeLLMFailed (58000 system_error): the LLM endpoint is unreachable or
	// answered with an error after the retries.
	CodeLLMFailed = "58000"
	// CodeTimeout (57014 query_canceled): the LLM did not answer in time, or
	// the generated query ran past --nl-statement-timeout (the server's own
	// 57014), or the client cancelled.
	CodeTimeout = "57014"
	// CodeNoTables (42P01 undefined_table): the retriever chose no table.
	CodeNoTables = "42P01"
	// CodeInFailedTx (25P02 in_failed_sql_transaction): the client's
	// transaction is aborted; nothing runs until it rolls back.
	CodeInFailedTx = "25P02"
	// CodeInternal (58000): anything else; details go to the log.
	CodeInternal = "58000"
)

func errorf(code, format string, args ...any) *proxy.Error {
	return proxy.Errorf(code, format, args...)
}

// sqlStater is implemented by errors that carry their own SQLSTATE (the
// retriever's).
type sqlStater interface{ SQLState() string }

// asClientError keeps errors that already speak to the client (proxy.Error,
// UpstreamError, errors with a SQLSTATE) and wraps the rest with code and msg.
func asClientError(err error, code, msg string) error {
	var pe *proxy.Error
	var ue *proxy.UpstreamError
	if errors.As(err, &pe) || errors.As(err, &ue) {
		return err
	}
	var ss sqlStater
	if errors.As(err, &ss) && ss.SQLState() != "" {
		return &proxy.Error{Code: ss.SQLState(), Message: err.Error(), Err: err}
	}
	return &proxy.Error{Code: code, Message: msg, Err: err}
}
