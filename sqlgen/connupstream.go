package sqlgen

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/atriumdb/atrium/proxy"
)

// ConnUpstream is a proxy.Upstream over one pgconn connection, so that SQL
// is checked outside a proxied session (atrium examples add, tests) with
// exactly the code the proxy runs on a client's session (CheckExample,
// ValidateOnSession). Not safe for concurrent use.
type ConnUpstream struct {
	conn *pgconn.PgConn
}

var _ proxy.Upstream = (*ConnUpstream)(nil)

// NewConnUpstream returns the Upstream over conn; the caller keeps
// ownership of conn.
func NewConnUpstream(conn *pgconn.PgConn) *ConnUpstream { return &ConnUpstream{conn: conn} }

// connUpstreamErr turns a server error into the *proxy.UpstreamError the
// checks expect, keeping its SQLSTATE, detail and hint.
func connUpstreamErr(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return &proxy.UpstreamError{Severity: pe.Severity, Code: pe.Code, Message: pe.Message, Detail: pe.Detail, Hint: pe.Hint}
	}
	return err
}

func protoFields(fds []pgconn.FieldDescription) []pgproto3.FieldDescription {
	out := make([]pgproto3.FieldDescription, len(fds))
	for i, f := range fds {
		out[i] = pgproto3.FieldDescription{Name: []byte(f.Name), TableOID: f.TableOID, TableAttributeNumber: f.TableAttributeNumber,
			DataTypeOID: f.DataTypeOID, DataTypeSize: f.DataTypeSize, TypeModifier: f.TypeModifier, Format: f.Format}
	}
	return out
}

// Query implements proxy.Upstream.
func (u *ConnUpstream) Query(ctx context.Context, sql string) (*proxy.Result, error) {
	results, err := u.conn.Exec(ctx, sql).ReadAll()
	if err != nil {
		return nil, connUpstreamErr(err)
	}
	res := &proxy.Result{}
	for _, r := range results {
		if r.FieldDescriptions != nil {
			res.Fields, res.Rows = protoFields(r.FieldDescriptions), r.Rows
		}
		res.CommandTag = r.CommandTag.String()
	}
	return res, nil
}

// Stream implements proxy.Upstream.
func (u *ConnUpstream) Stream(ctx context.Context, sql string, limit int, w proxy.RowWriter, params ...[]byte) (string, bool, error) {
	rr := u.conn.ExecParams(ctx, sql, params, nil, nil, nil)
	if fds := rr.FieldDescriptions(); fds != nil {
		if err := w.Fields(protoFields(fds)); err != nil {
			_, _ = rr.Close()
			return "", false, err
		}
	}
	n, truncated := 0, false
	for rr.NextRow() {
		if limit > 0 && n >= limit {
			truncated = true
			continue
		}
		n++
		if err := w.Row(rr.Values()); err != nil {
			_, _ = rr.Close()
			return "", false, err
		}
	}
	tag, err := rr.Close()
	if err != nil {
		return "", false, connUpstreamErr(err)
	}
	return tag.String(), truncated, nil
}

// Describe implements proxy.Upstream.
func (u *ConnUpstream) Describe(ctx context.Context, sql string) ([]pgproto3.FieldDescription, error) {
	sd, err := u.conn.Prepare(ctx, "", sql, nil)
	if err != nil {
		return nil, connUpstreamErr(err)
	}
	if len(sd.Fields) == 0 {
		return nil, nil
	}
	return protoFields(sd.Fields), nil
}

// TxStatus implements proxy.Upstream.
func (u *ConnUpstream) TxStatus() byte { return u.conn.TxStatus() }
