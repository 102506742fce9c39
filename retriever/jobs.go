package retriever

import (
	"context"
	"fmt"
	"net/url"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	pgxvec "github.com/pgvector/pgvector-go/pgx"
)

func redactDSN(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.Scheme != "" {
		return u.Redacted()
	}
	return "(DSN)"
}

// OpenPool connects to dsn with the session settings retrieval needs and
// pgvector's types registered on every connection (see RegisterVectorTypes).
func OpenPool(ctx context.Context, dsn string, perList int, extra map[string]string) (*pgxpool.Pool, error) {
	pc, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("parse DSN: %w", err)
	}
	ConfigurePool(pc, perList)
	for k, v := range extra {
		pc.ConnConfig.RuntimeParams[k] = v
	}
	ConfigureVectorTypes(pc)

	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", redactDSN(dsn), err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to %s: %w", redactDSN(dsn), err)
	}
	return pool, nil
}

// ConfigureVectorTypes makes every connection of pools built from pc carry
// pgvector's codecs: RegisterVectorTypes after connecting and, because a
// pool may be opened on a database before `CREATE EXTENSION vector` (eval
// and train-atr migrate after connecting), again before each acquire until
// the connection has them (no round trip once it does).
func ConfigureVectorTypes(pc *pgxpool.Config) {
	pc.AfterConnect = RegisterVectorTypes
	pc.PrepareConn = func(ctx context.Context, conn *pgx.Conn) (bool, error) {
		if err := RegisterVectorTypes(ctx, conn); err != nil {
			return false, err
		}
		return true, nil
	}
}

// RegisterVectorTypes registers pgvector's vector, halfvec and sparsevec
// codecs on conn, so pgvector.Vector values travel in binary (COPY needs
// this: without the codec pgx sends a vector as text in a binary COPY and
// the server reads garbage dimensions). It is a no-op when conn already has
// them, and when the vector extension is not installed in the database yet
// (its types become available after `CREATE EXTENSION vector`, e.g. through
// migrations); any other failure is returned. Suitable as
// pgxpool.Config.AfterConnect.
func RegisterVectorTypes(ctx context.Context, conn *pgx.Conn) error {
	if _, ok := conn.TypeMap().TypeForName("vector"); ok {
		return nil
	}
	var present bool
	if err := conn.QueryRow(ctx, "SELECT to_regtype('vector') IS NOT NULL").Scan(&present); err != nil {
		return fmt.Errorf("look up the pgvector type: %w", err)
	}
	if !present {
		return nil
	}
	if err := pgxvec.RegisterTypes(ctx, conn); err != nil {
		return fmt.Errorf("register pgvector types: %w", err)
	}
	return nil
}
