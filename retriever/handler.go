package retriever

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/atriumdb/atrium/internal/telemetry"
	"github.com/atriumdb/atrium/proxy"
)

// Handler answers `RETRIEVE <question>` statements through the proxy with the
// tables the retriever chooses: one row per table with the columns rank,
// schema, table, score, chosen, reason, join_path. Safe for concurrent use.
type Handler struct {
	r   *Retriever
	log *slog.Logger
	obs func(ctx context.Context, e RetrieveEvent)
}

// RetrieveEvent describes one RETRIEVE the Handler answered, for the query
// log and metrics.
type RetrieveEvent struct {
	// RequestID is the statement's request id (its log lines carry it).
	RequestID string
	Session   proxy.SessionInfo
	Question  string
	// Result is nil when retrieval failed.
	Result *Result
	// Err is what the client saw; nil on success.
	Err      error
	Start    time.Time
	Duration time.Duration
	// Rows is how many rows the client received.
	Rows int
}

// Observe returns a copy of h that calls fn after every RETRIEVE it
// answers, on the session's goroutine, with a context carrying the
// request id. fn must not block.
func (h *Handler) Observe(fn func(ctx context.Context, e RetrieveEvent)) *Handler {
	c := *h
	c.obs = fn
	return &c
}

var _ proxy.Handler = (*Handler)(nil)

// NewHandler returns a proxy.Handler for RETRIEVE backed by r. log may be nil.
func NewHandler(r *Retriever, log *slog.Logger) *Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Handler{r: r, log: log}
}

// ParseRetrieve recognises `RETRIEVE <question>`: the keyword (any case)
// after optional white space and ordinary comments, then the question up to
// the end, a trailing semicolon dropped. The question may be written as a
// single-quoted string literal. ok is false for anything else, which is
// ordinary SQL. The question may be empty; the caller reports it.
func ParseRetrieve(sql string) (question string, ok bool) {
	i := skipSpaceAndComments(sql)
	const kw = "retrieve"
	if len(sql)-i < len(kw) || !strings.EqualFold(sql[i:i+len(kw)], kw) {
		return "", false
	}
	rest := sql[i+len(kw):]
	if rest != "" && !isSpace(rest[0]) {
		return "", false // e.g. RETRIEVED, retrieve_all(...)
	}
	rest = strings.TrimSpace(rest)
	for strings.HasSuffix(rest, ";") {
		rest = strings.TrimSpace(strings.TrimSuffix(rest, ";"))
	}
	if len(rest) >= 2 && rest[0] == '\'' && rest[len(rest)-1] == '\'' {
		if inner := rest[1 : len(rest)-1]; !strings.Contains(strings.ReplaceAll(inner, "''", ""), "'") {
			rest = strings.ReplaceAll(inner, "''", "'")
		}
	}
	return strings.TrimSpace(rest), true
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// skipSpaceAndComments returns the offset of the first byte that is not
// white space or part of a comment (block comments nest, as in PostgreSQL).
func skipSpaceAndComments(s string) int {
	i := 0
	for i < len(s) {
		switch {
		case isSpace(s[i]):
			i++
		case strings.HasPrefix(s[i:], "--"):
			j := strings.IndexAny(s[i:], "\r\n")
			if j < 0 {
				return len(s)
			}
			i += j + 1
		case strings.HasPrefix(s[i:], "/*"):
			depth := 0
			for i < len(s) {
				if strings.HasPrefix(s[i:], "/*") {
					depth++
					i += 2
				} else if strings.HasPrefix(s[i:], "*/") {
					depth--
					i += 2
					if depth == 0 {
						break
					}
				} else {
					i++
				}
			}
			if depth != 0 {
				return len(s)
			}
		default:
			return i
		}
	}
	return i
}

// Intercept implements proxy.Handler.
func (h *Handler) Intercept(_ context.Context, info proxy.SessionInfo, sql string) (proxy.Statement, error) {
	q, ok := ParseRetrieve(sql)
	if !ok {
		return nil, nil
	}
	if _, err := checkQuestion(q, h.r.cfg.MaxQuestionBytes); err != nil {
		return nil, toProxyError(err)
	}
	return &retrieveStatement{h: h, info: info, question: q}, nil
}

type retrieveStatement struct {
	h        *Handler
	info     proxy.SessionInfo
	question string
}

// Kind implements proxy.Kinded.
func (s *retrieveStatement) Kind() string { return "retrieve" }

// Type OIDs of the result columns (pg_type).
const (
	oidBool   = 16
	oidInt4   = 23
	oidText   = 25
	oidFloat8 = 701
)

// RetrieveFields is the row description of a RETRIEVE result.
func RetrieveFields() []pgproto3.FieldDescription {
	f := func(name string, oid uint32, size int16) pgproto3.FieldDescription {
		return pgproto3.FieldDescription{Name: []byte(name), DataTypeOID: oid, DataTypeSize: size, TypeModifier: -1}
	}
	return []pgproto3.FieldDescription{
		f("rank", oidInt4, 4), f("schema", oidText, -1), f("table", oidText, -1), f("score", oidFloat8, 8),
		f("chosen", oidBool, 1), f("reason", oidText, -1), f("join_path", oidText, -1),
	}
}

func (s *retrieveStatement) Describe(context.Context, proxy.Upstream) ([]pgproto3.FieldDescription, error) {
	return RetrieveFields(), nil
}

// Execute retrieves, then keeps only the tables the client's role may read
// (FilterReadable on the client's own upstream session), so RETRIEVE never
// reveals a table the client could not select from. up is nil only when the
// statement runs outside a client session (tests, in-process callers); then
// nothing is filtered.
func (s *retrieveStatement) Execute(ctx context.Context, up proxy.Upstream, w proxy.RowWriter) (string, error) {
	ctx, id := telemetry.EnsureRequestID(ctx)
	start := time.Now()
	res, n, err := s.execute(ctx, up, w)
	if s.h.obs != nil {
		s.h.obs(ctx, RetrieveEvent{RequestID: id, Session: s.info, Question: s.question, Result: res, Err: err,
			Start: start, Duration: time.Since(start), Rows: n})
	}
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("SELECT %d", n), nil
}

func (s *retrieveStatement) execute(ctx context.Context, up proxy.Upstream, w proxy.RowWriter) (*Result, int, error) {
	res, err := s.h.r.Retrieve(ctx, s.question)
	if err != nil {
		if ctx.Err() != nil {
			return nil, 0, ctx.Err()
		}
		s.h.log.WarnContext(ctx, "retrieve failed", "err", err)
		return nil, 0, toProxyError(err)
	}
	if up != nil {
		if err := FilterReadable(ctx, up, res); err != nil {
			if ctx.Err() != nil {
				return nil, 0, ctx.Err()
			}
			return nil, 0, err
		}
	}
	n := 0
	for _, row := range ResultRows(res) {
		if err := w.Row(row); err != nil {
			return res, n, err
		}
		n++
	}
	return res, n, nil
}

// toProxyError gives errors a client can provoke their SQLSTATE.
func toProxyError(err error) error {
	var qe *QuestionError
	if errors.As(err, &qe) {
		return &proxy.Error{Code: qe.Code, Message: "RETRIEVE: " + qe.Msg}
	}
	var ce *CatalogError
	if errors.As(err, &ce) {
		return &proxy.Error{Code: ce.SQLState(), Message: "RETRIEVE: " + ce.Error(), Hint: "Run `atrium catalog sync --dsn ...` to build the catalog.", Err: err}
	}
	return err
}
