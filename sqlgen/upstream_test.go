package sqlgen

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgproto3"
)

// pgUpstream is a proxy.Upstream over one real pgconn connection: the
// pipeline's unit tests run against real PostgreSQL without the proxy, as
// the proxy's session would drive a Statement. conn is there for tests
// that close or inspect the connection.
type pgUpstream struct {
	*ConnUpstream
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
	return &pgUpstream{ConnUpstream: NewConnUpstream(c), conn: c}
}

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
