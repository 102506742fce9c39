package question

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/atriumdb/atrium/proxy"
	"github.com/atriumdb/atrium/retriever"
	"github.com/atriumdb/atrium/sqlgen"
)

// retrieveStatement answers `RETRIEVE <question>` with the tables the
// retriever chooses that the asking role may read: one row per table with
// the columns rank, schema, table, score, chosen, reason, join_path.
type retrieveStatement struct {
	h        *Handler
	info     proxy.SessionInfo
	question string
	// previous is the turn the question follows up (nil: on its own).
	previous *sqlgen.Turn
}

var (
	_ proxy.Statement = (*retrieveStatement)(nil)
	_ proxy.Kinded    = (*retrieveStatement)(nil)
)

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

// Describe implements proxy.Statement.
func (s *retrieveStatement) Describe(context.Context, proxy.Upstream) ([]pgproto3.FieldDescription, error) {
	return RetrieveFields(), nil
}

// Execute retrieves, then keeps only what the client's role may read (see
// Readable), so RETRIEVE never reveals a table the client could not select
// from. up is nil only when the statement runs outside a client session
// (tests, in-process callers); then nothing is filtered. The retrieval and
// the statement's outcome are reported to one sqlgen.Tracer, as an nl
// question's are.
func (s *retrieveStatement) Execute(ctx context.Context, up proxy.Upstream, w proxy.RowWriter) (string, error) {
	tr := s.h.nl.Tracer(s.info, sqlgen.KindRetrieve, s.question)
	if s.previous != nil {
		tr.FollowUpOf(s.previous.RequestID)
	}
	ctx = tr.Begin(ctx)
	// RETRIEVE is a generation phase without the LLM: retrieval and the
	// privilege check run under the same deadline as an nl question's.
	ctx, cancel := context.WithTimeout(ctx, s.h.nl.Config().GenerateTimeout)
	defer cancel()
	n, err := s.execute(ctx, up, w, tr)
	tr.Finish(ctx, err, int64(n))
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("SELECT %d", n), nil
}

func (s *retrieveStatement) execute(ctx context.Context, up proxy.Upstream, w proxy.RowWriter, tr *sqlgen.Tracer) (int, error) {
	t0 := time.Now()
	res, err := s.h.retrieve(ctx, s.question, s.previous)
	if err == nil && up != nil {
		if res, err = Readable(ctx, up, res); err != nil {
			res = nil
		}
	}
	if err != nil {
		tr.Retrieved(time.Since(t0), nil, err)
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, toProxyError(err)
	}
	tr.Retrieved(time.Since(t0), convert(res), nil)
	// An empty choice says why, as an nl question's 42P01 does, and under
	// the same rule: only when the role may read every table the reason
	// speaks of.
	if res.Abstained && res.AbstainReason != "" && allShown(res.Selected, res.Tables) {
		if err := w.Notice(&pgproto3.NoticeResponse{Severity: "NOTICE", SeverityUnlocalized: "NOTICE", Code: "00000",
			Message: "atrium: no table chosen: " + res.AbstainReason}); err != nil {
			return 0, err
		}
	}
	n := 0
	for _, row := range retriever.ResultRows(res) {
		if err := w.Row(row); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// toProxyError gives errors a client can provoke their SQLSTATE.
func toProxyError(err error) error {
	var qe *retriever.QuestionError
	if errors.As(err, &qe) {
		return &proxy.Error{Code: qe.Code, Message: "RETRIEVE: " + qe.Msg}
	}
	var ce *retriever.CatalogError
	if errors.As(err, &ce) {
		return &proxy.Error{Code: ce.SQLState(), Message: "RETRIEVE: " + ce.Error(), Hint: "Run `atrium catalog sync --dsn ...` to build the catalog.", Err: err}
	}
	return err
}
