package proxy

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgproto3"
)

// Handler is the interception point. The session calls it for every simple
// Query and every Parse, before anything is sent upstream, except while the
// upstream is in COPY FROM STDIN and while the session skips messages until
// Sync after an error (the server would ignore them too). A Handler that does
// not recognise the statement returns (nil, nil) and the message is relayed
// unchanged. Implementations must be safe for concurrent use: many sessions
// call the same Handler.
//
// Intercept is on the hot path of every simple query: a Handler should reject
// text it does not own with a cheap check (a prefix, a keyword) before doing
// anything expensive, and must not block on I/O to decide. So that ordinary
// SQL is never copied, the session first offers the text as a view of its
// read buffer, valid only during that call; when the Handler claims it
// (returns a Statement or an error), the session discards that answer and
// asks again with a string the Handler may keep. The decision must therefore
// depend only on the arguments.
type Handler interface {
	// Intercept inspects one statement's text (a whole simple Query string,
	// which may hold several statements, or one Parse's query). It returns a
	// non-nil Statement to take the statement over; the returned Statement
	// belongs to the session that asked, and is used from that session's
	// goroutine only. An error is reported to the client as an ErrorResponse
	// (see Error) and the session continues. The sql string may be retained
	// only when Intercept returns a Statement or an error (see above).
	Intercept(ctx context.Context, info SessionInfo, sql string) (Statement, error)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, info SessionInfo, sql string) (Statement, error)

// Intercept calls f.
func (f HandlerFunc) Intercept(ctx context.Context, info SessionInfo, sql string) (Statement, error) {
	return f(ctx, info, sql)
}

// Handlers tries each Handler in order; the first that returns a Statement or
// an error decides. Nil entries are skipped. The zero value intercepts
// nothing.
type Handlers []Handler

// Intercept implements Handler.
func (hs Handlers) Intercept(ctx context.Context, info SessionInfo, sql string) (Statement, error) {
	for _, h := range hs {
		if h == nil {
			continue
		}
		st, err := h.Intercept(ctx, info, sql)
		if st != nil || err != nil {
			return st, err
		}
	}
	return nil, nil
}

// SessionEnder is implemented by a Handler that keeps state per client
// session, keyed by SessionInfo.ID (the previous question of a session,
// for follow-ups and feedback). The proxy calls SessionEnded once per
// session that passed authentication, after the connection closed and no
// Intercept or Statement call for it is running any more, so the state can
// be dropped. It must not block.
type SessionEnder interface {
	SessionEnded(id uint64)
}

// SessionEnded implements SessionEnder: every member that keeps session
// state hears of the end.
func (hs Handlers) SessionEnded(id uint64) {
	for _, h := range hs {
		if se, ok := h.(SessionEnder); ok {
			se.SessionEnded(id)
		}
	}
}

// Statement is a statement that the proxy answers itself instead of relaying.
//
// Simple protocol: the session calls Describe, sends the RowDescription (when
// the result is non-nil), then calls Execute once, then sends CommandComplete
// and ReadyForQuery with the upstream's real transaction status.
//
// Extended protocol: the session answers Parse with ParseComplete itself and
// keeps the Statement as a virtual prepared statement (named or unnamed).
// Describe runs at most once per Statement (the result is remembered): when
// the client first describes the statement or a portal bound to it, or else
// just before the first Execute. Execute runs once per portal bound to it. Statements take no parameters: a Bind
// with parameter values is refused with SQLSTATE 08P01. When the client
// fetches with a row limit, the session sends the first rows Execute writes
// and buffers the rest, handing them out across PortalSuspended; Execute
// still runs once per portal,
// and RowWriter.Row fails with SQLSTATE 54000 once the session holds more
// than Config.MaxPortalBuffer bytes of such rows.
//
// Describe and Execute are called from the session's goroutine only; ctx is
// cancelled when the client sends a CancelRequest for this session, when the
// client disconnects (closes or resets its socket, noticed at once while the
// Statement runs), or when the proxy shuts down. After a disconnect the
// session ends as soon as the Statement returns, so a Statement should clean
// up on the upstream (with a context of its own) before returning.
//
// The sql a Handler sees is UTF-8 whatever the session's client_encoding;
// text a Statement sends through Upstream is converted to the client's
// encoding, and result values come back in it.
type Statement interface {
	// Describe returns the row description of the statement's result, or nil
	// when it returns no rows. It may use the upstream session (up) to
	// prepare or validate.
	Describe(ctx context.Context, up Upstream) ([]pgproto3.FieldDescription, error)
	// Execute runs the statement and writes its rows to w, and returns the
	// command tag (e.g. "SELECT 3"). Rows must match the description Describe
	// returned; calling w.Fields is optional (the session sends the
	// description Describe returned) and its column count must agree.
	Execute(ctx context.Context, up Upstream, w RowWriter) (commandTag string, err error)
}

// Kinded is implemented by a Statement that names its kind (e.g. "version",
// "retrieve", "nl") for metrics; others count as "other".
type Kinded interface {
	Kind() string
}

// SessionInfo identifies the client session asking. It is a snapshot; Params
// is shared with the session and must not be modified.
type SessionInfo struct {
	// ID is the proxy's connection id, as in its logs.
	ID              uint64
	User            string
	Database        string
	ApplicationName string
	// Params holds the server's ParameterStatus values as last reported
	// (search_path is not among them; ask the upstream with SHOW when it
	// matters).
	Params map[string]string
	// TxStatus is the last ReadyForQuery status: 'I' idle, 'T' in a
	// transaction block, 'E' in a failed transaction block.
	TxStatus byte
}

// Upstream runs statements on the client's own upstream connection, so the
// client's role, privileges, search_path and transaction apply.
//
// Guarantees: while a Statement's Describe or Execute runs, every message the
// client sent before the intercepted one has been answered by the upstream and
// relayed to the client, and the client's messages after it are not read, so
// the connection is the Statement's alone. Upstream refuses to run anything
// (SQLSTATE 0A000, see ErrUpstreamBusy) when the intercepted statement is in
// an extended-protocol pipeline behind a Bind, an Execute or an unnamed Parse
// of another statement not yet followed by Sync, because a statement run
// there would end the client's implicit transaction or replace its unnamed
// statement. (Behind only named Parse/Describe/Close it may run.) Query,
// Stream and Describe also replace the session's unnamed prepared statement,
// as a simple Query from the client would. Not safe for concurrent use; valid only during
// the call that received it.
type Upstream interface {
	// Query runs sql through the simple protocol (it may hold several
	// statements) and collects the result of the last statement that
	// returned rows (or, when none did, of the last statement). A server error comes back as
	// *UpstreamError carrying the SQLSTATE; the upstream stays usable (inside
	// a transaction block it is then in the failed state, see TxStatus).
	// Cancelling ctx sends a CancelRequest upstream and waits for the server
	// to finish.
	Query(ctx context.Context, sql string) (*Result, error)
	// Stream runs one statement through the extended protocol (unnamed
	// statement and portal, results in text format) with the given
	// parameters (text format; a nil element is NULL), sends its row
	// description to w.Fields (not called when the statement returns no
	// rows), writes at most limit rows to w.Row (limit <= 0: all), and
	// reports whether rows were cut. Errors as for Query.
	Stream(ctx context.Context, sql string, limit int, w RowWriter, params ...[]byte) (tag string, truncated bool, err error)
	// Describe prepares sql as the unnamed statement and returns the row
	// description of its result without executing it (Parse, Describe
	// statement, Sync): the server runs parse analysis under the session's
	// role and search_path, so unknown tables and columns and type errors
	// surface here, but no rows are computed and no privilege on the
	// tables is checked. It returns nil for a statement that returns no
	// rows. Result formats in the description are text (0). Errors as for
	// Query.
	Describe(ctx context.Context, sql string) ([]pgproto3.FieldDescription, error)
	// TxStatus is the upstream's transaction status ('I', 'T' or 'E') after
	// the last command.
	TxStatus() byte
}

// ErrUpstreamBusy is returned (wrapped in an *Error with SQLSTATE 0A000) by
// Upstream methods when the connection cannot be used by a Statement; see
// Upstream.
var ErrUpstreamBusy = errors.New("upstream connection is inside an unsynced pipeline")

// Result is a fully read result set.
type Result struct {
	Fields     []pgproto3.FieldDescription
	Rows       [][][]byte
	CommandTag string
}

// RowWriter receives a result: the row description once, then rows, then
// notices in any order. Values are in text format; nil is SQL NULL. The
// writer does not retain values after Row returns, so callers may reuse
// them; a writer that keeps rows must copy them.
type RowWriter interface {
	Notice(n *pgproto3.NoticeResponse) error
	Fields(f []pgproto3.FieldDescription) error
	Row(values [][]byte) error
}

// UpstreamError is an error the upstream server reported for a statement a
// Statement ran. The session relays it to the client with its SQLSTATE.
type UpstreamError struct {
	Severity, Code, Message, Detail, Hint string
}

func (e *UpstreamError) Error() string {
	return e.Severity + ": " + e.Message + " (SQLSTATE " + e.Code + ")"
}

// Error is an error a Handler or Statement returns to give the client a
// precise ErrorResponse. Other errors are reported as SQLSTATE 58000 with a
// generic message (their text goes to the log only), except context
// cancellation (57014 query_canceled) and *UpstreamError (relayed as is).
type Error struct {
	// Code is the SQLSTATE, e.g. "42601".
	Code    string
	Message string
	Detail  string
	Hint    string
	// Err is an optional cause, logged but never sent to the client.
	Err error
}

// Errorf returns an *Error with the given SQLSTATE and formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

func (e *Error) Error() string {
	s := e.Message + " (SQLSTATE " + e.Code + ")"
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }
