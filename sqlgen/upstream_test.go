package sqlgen

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/atriumdb/atrium/proxy"
)

// pgUpstream is a proxy.Upstream over one real pgconn connection: the
// pipeline's unit tests run against real PostgreSQL without the proxy, as
// the proxy's session would drive a Statement.
type pgUpstream struct {
	conn *pgconn.PgConn
}

func connectUpstream(t testing.TB, dsn string) *pgUpstream {
	t.Helper()
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	// Cancel like the proxy does: a CancelRequest, and the connection lives on.
	cfg.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: c, DeadlineDelay: 5 * time.Second}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return &pgUpstream{conn: c}
}

func upstreamErr(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return &proxy.UpstreamError{Severity: pe.Severity, Code: pe.Code, Message: pe.Message, Detail: pe.Detail, Hint: pe.Hint}
	}
	return err
}

func fields(fds []pgconn.FieldDescription) []pgproto3.FieldDescription {
	out := make([]pgproto3.FieldDescription, len(fds))
	for i, f := range fds {
		out[i] = pgproto3.FieldDescription{Name: []byte(f.Name), TableOID: f.TableOID, TableAttributeNumber: f.TableAttributeNumber,
			DataTypeOID: f.DataTypeOID, DataTypeSize: f.DataTypeSize, TypeModifier: f.TypeModifier, Format: f.Format}
	}
	return out
}

func (u *pgUpstream) Query(ctx context.Context, sql string) (*proxy.Result, error) {
	results, err := u.conn.Exec(ctx, sql).ReadAll()
	if err != nil {
		return nil, upstreamErr(err)
	}
	res := &proxy.Result{}
	for _, r := range results {
		if r.FieldDescriptions != nil {
			res.Fields, res.Rows = fields(r.FieldDescriptions), r.Rows
		}
		res.CommandTag = r.CommandTag.String()
	}
	return res, nil
}

func (u *pgUpstream) Stream(ctx context.Context, sql string, limit int, w proxy.RowWriter, params ...[]byte) (string, bool, error) {
	rr := u.conn.ExecParams(ctx, sql, params, nil, nil, nil)
	if err := w.Fields(fields(rr.FieldDescriptions())); err != nil {
		_, _ = rr.Close()
		return "", false, err
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
		return "", false, upstreamErr(err)
	}
	return tag.String(), truncated, nil
}

func (u *pgUpstream) Describe(ctx context.Context, sql string) ([]pgproto3.FieldDescription, error) {
	sd, err := u.conn.Prepare(ctx, "", sql, nil)
	if err != nil {
		return nil, upstreamErr(err)
	}
	if len(sd.Fields) == 0 {
		return nil, nil
	}
	return fields(sd.Fields), nil
}

func (u *pgUpstream) TxStatus() byte { return u.conn.TxStatus() }

// collector is a proxy.RowWriter that keeps what it is given.
type collector struct {
	notices []string
	fields  []pgproto3.FieldDescription
	rows    [][]string
}

func (c *collector) Notice(n *pgproto3.NoticeResponse) error {
	c.notices = append(c.notices, n.Message)
	return nil
}

func (c *collector) Fields(f []pgproto3.FieldDescription) error {
	c.fields = f
	return nil
}

func (c *collector) Row(values [][]byte) error {
	row := make([]string, len(values))
	for i, v := range values {
		if v == nil {
			row[i] = "NULL"
		} else {
			row[i] = string(v)
		}
	}
	c.rows = append(c.rows, row)
	return nil
}
