package sqlgen

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/atriumdb/atrium/proxy"
)

// scope is a read-only region on the client's own upstream session, opened
// around everything the pipeline runs there, and closed so the session is
// exactly as it was:
//
//   - Client idle ('I'): BEGIN READ ONLY; SET LOCAL statement_timeout ...
//     and at the end ROLLBACK. A read-only transaction has nothing to
//     commit; rolling back also discards any session setting a function in
//     the generated SQL may have changed, which COMMIT would keep.
//   - Client inside its own transaction ('T'): SAVEPOINT; SET LOCAL
//     transaction_read_only = on; SET LOCAL statement_timeout ... and at the
//     end ROLLBACK TO SAVEPOINT; RELEASE SAVEPOINT. PostgreSQL lets a
//     transaction switch to read-only at any point (only the way back is
//     refused), and rolling back to the savepoint restores the client's
//     read-write mode, its statement_timeout and everything else, even when
//     our statement failed. The question sees the client's own uncommitted
//     rows, as any statement in its transaction would.
//   - Client in a failed transaction ('E'): nothing runs; 25P02.
//
// Both forms pin standard_conforming_strings = on with SET LOCAL (see
// lexerSettings), and generated SQL only ever reaches the server through the
// extended protocol (explain, describe, stream), never as a simple Query:
// a Parse message carries exactly one statement, so no reading of the text
// can smuggle a COMMIT and a second statement past the read-only
// transaction.
//
// A scope is used by one session goroutine only.
type scope struct {
	up      proxy.Upstream
	status  byte   // the client's transaction status when the scope opened
	setup   string // the SET LOCALs, re-applied after a reset
	aborted bool   // a statement failed; reset before the next
}

const savepoint = "atrium_nl"

// cleanupTimeout bounds closing a scope after the question's own context
// ended (cancelled by the client or timed out): the client's session must
// still be put back.
const cleanupTimeout = 10 * time.Second

// lexerSettings make the server read generated SQL exactly as Check read
// it. pg_query (the parser Check uses) always lexes with
// standard_conforming_strings on: with it off, the server reads 'x\' as
// the start of a longer literal, so text Check saw as one harmless literal
// followed by code can be, for the server, code hidden in a literal or the
// other way round. Pinning the server to Check's reading is the robust
// choice: validating "with the session's own setting" would need a second
// lexer that pg_query does not have, and would still leave two readings of
// one text in play. SET LOCAL ends with the scope's ROLLBACK (TO
// SAVEPOINT), so the client's own setting is back before it reads
// ReadyForQuery. With standard strings on, backslash_quote and
// escape_string_warning only concern E-prefixed literals, which both
// lexers read alike. The client encoding is the other way a server may
// read the same bytes otherwise; see textSafe.
const lexerSettings = "SET LOCAL standard_conforming_strings = on"

func openScope(ctx context.Context, up proxy.Upstream, statementTimeout time.Duration) (*scope, error) {
	s, _, err := openScopeWith(ctx, up, statementTimeout, false)
	return s, err
}

// openScopeAs opens a scope and reads the session's identity in the same
// round trip: the identity select is the last statement of the Query that
// begins the scope. Nothing the scope sets (read-only, statement_timeout,
// standard_conforming_strings) is part of the identity, so it reads as it
// would outside.
func openScopeAs(ctx context.Context, up proxy.Upstream, statementTimeout time.Duration) (*scope, identity, error) {
	return openScopeWith(ctx, up, statementTimeout, true)
}

func openScopeWith(ctx context.Context, up proxy.Upstream, statementTimeout time.Duration, withIdentity bool) (*scope, identity, error) {
	s := &scope{up: up, status: up.TxStatus()}
	s.setup = fmt.Sprintf(lexerSettings+"; SET LOCAL statement_timeout = %d", statementTimeout.Milliseconds())
	var sql string
	switch s.status {
	case 'I':
		sql = "BEGIN READ ONLY; " + s.setup
	case 'T':
		s.setup = "SET LOCAL transaction_read_only = on; " + s.setup
		sql = "SAVEPOINT " + savepoint + "; " + s.setup
	case 'E':
		return nil, identity{}, errInFailedTx()
	default:
		return nil, identity{}, errorf(CodeInternal, "unknown transaction status %q", s.status)
	}
	if withIdentity {
		sql += "; " + identitySelect
	}
	res, err := up.Query(ctx, sql)
	if err != nil {
		s.close(ctx)
		return nil, identity{}, err
	}
	if !withIdentity {
		return s, identity{}, nil
	}
	if len(res.Rows) != 1 || len(res.Rows[0]) != identityColumns {
		s.close(ctx)
		return nil, identity{}, errorf(CodeInternal, "unexpected answer to the session identity query")
	}
	return s, parseIdentity(res.Rows[0]), nil
}

func errInFailedTx() error {
	return &proxy.Error{Code: CodeInFailedTx, Message: "current transaction is aborted, commands ignored until end of transaction block",
		Hint: "ROLLBACK the transaction before asking a question."}
}

// query runs sql inside the scope through the simple protocol, first
// undoing a failed statement's effects. Only for SQL Atrium writes itself:
// generated SQL goes through explain, describe and stream. A statement
// error leaves the scope usable (it resets before the next query).
func (s *scope) query(ctx context.Context, sql string) (*proxy.Result, error) {
	if s.aborted {
		sql = s.resetSQL() + "; " + sql
	}
	res, err := s.up.Query(ctx, sql)
	s.aborted = err != nil
	return res, err
}

func (s *scope) resetSQL() string {
	if s.status == 'I' {
		return "ROLLBACK; BEGIN READ ONLY; " + s.setup
	}
	return "ROLLBACK TO SAVEPOINT " + savepoint + "; " + s.setup
}

// clientOnlyEncodings are the client encodings in which a multibyte
// character may end in an ASCII byte such as a backslash: the server,
// converting from them, may read the bytes of generated SQL (UTF-8 text
// from the LLM) other than pg_query did, e.g. lose the backslash that
// escapes a quote in an E-prefixed literal.
var clientOnlyEncodings = map[string]bool{
	"SJIS": true, "SHIFT_JIS_2004": true, "BIG5": true, "GBK": true, "UHC": true, "GB18030": true, "JOHAB": true,
}

// textSafe refuses generated SQL the session could read other than
// pg_query: non-ASCII text in a session whose client encoding is one of
// clientOnlyEncodings (asked each time: the client may change it between a
// prepared question's Describe and Execute). ASCII text costs nothing.
func (s *scope) textSafe(ctx context.Context, sql string) error {
	if isASCII(sql) {
		return nil
	}
	res, err := s.query(ctx, "SELECT pg_catalog.current_setting('client_encoding')")
	if err != nil {
		return err
	}
	if len(res.Rows) != 1 || len(res.Rows[0]) != 1 {
		return errorf(CodeInternal, "unexpected answer to SHOW client_encoding")
	}
	if enc := string(res.Rows[0][0]); clientOnlyEncodings[strings.ToUpper(enc)] {
		return notReadOnly("it holds non-ASCII text, which a session with client_encoding %s may read other than the checker did", enc)
	}
	return nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// explain runs EXPLAIN (without ANALYZE) of one statement through the
// extended protocol, discarding the plan: it surfaces the server's
// planning and permission errors without computing a row.
func (s *scope) explain(ctx context.Context, sql string) error {
	_, _, err := s.stream(ctx, "EXPLAIN "+sql, 0, discardRows{})
	return err
}

// discardRows is a proxy.RowWriter that drops everything.
type discardRows struct{}

func (discardRows) Notice(*pgproto3.NoticeResponse) error    { return nil }
func (discardRows) Fields([]pgproto3.FieldDescription) error { return nil }
func (discardRows) Row([][]byte) error                       { return nil }

// describe returns sql's row description without running it.
func (s *scope) describe(ctx context.Context, sql string) ([]pgproto3.FieldDescription, error) {
	if s.aborted {
		if _, err := s.up.Query(ctx, s.resetSQL()); err != nil {
			return nil, err
		}
		s.aborted = false
	}
	if err := s.textSafe(ctx, sql); err != nil {
		return nil, err
	}
	fields, err := s.up.Describe(ctx, sql)
	s.aborted = err != nil
	return fields, err
}

// stream runs the statement, writing at most limit rows to w.
func (s *scope) stream(ctx context.Context, sql string, limit int, w proxy.RowWriter) (string, bool, error) {
	if s.aborted {
		if _, err := s.up.Query(ctx, s.resetSQL()); err != nil {
			return "", false, err
		}
		s.aborted = false
	}
	if err := s.textSafe(ctx, sql); err != nil {
		return "", false, err
	}
	tag, truncated, err := s.up.Stream(ctx, sql, limit, w)
	s.aborted = err != nil
	return tag, truncated, err
}

// close puts the session back as it was. It runs even when ctx is done, with
// a context of its own.
func (s *scope) close(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	var sql string
	switch s.status {
	case 'I':
		if s.up.TxStatus() == 'I' {
			return nil // BEGIN never took effect
		}
		sql = "ROLLBACK"
	case 'T':
		sql = "ROLLBACK TO SAVEPOINT " + savepoint + "; RELEASE SAVEPOINT " + savepoint
	}
	if _, err := s.up.Query(ctx, sql); err != nil {
		return fmt.Errorf("restore the client's transaction state: %w", err)
	}
	if got := s.up.TxStatus(); got != s.status {
		return fmt.Errorf("restore the client's transaction state: status is %q, want %q", got, s.status)
	}
	return nil
}

// repairable says whether an error from running generated SQL is worth
// sending back to the LLM: mistakes in the SQL (syntax, unknown names, type
// errors, bad literals, unsupported constructs), not permissions, timeouts or
// connection trouble.
func repairable(err error) bool {
	var ue *proxy.UpstreamError
	if !errors.As(err, &ue) || len(ue.Code) != 5 {
		return false
	}
	if ue.Code == "42501" {
		return false
	}
	switch ue.Code[:2] {
	case "42", "22", "0A", "21", "2F", "39":
		return true
	}
	return false
}
