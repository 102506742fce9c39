package benchload

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// DefaultServerDSN is the PostgreSQL server evaluation and training use when
// none is given.
const DefaultServerDSN = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// DedicatedDB (re)creates database name on the server of serverDSN and
// returns its DSN and a function that drops it.
func DedicatedDB(ctx context.Context, serverDSN, name string) (string, func(), error) {
	if serverDSN == "" {
		serverDSN = DefaultServerDSN
	}
	admin, err := pgx.Connect(ctx, serverDSN)
	if err != nil {
		return "", nil, fmt.Errorf("connect to the PostgreSQL server: %w", err)
	}
	defer admin.Close(context.WithoutCancel(ctx))
	id := pgx.Identifier{name}.Sanitize()
	if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+id+" WITH (FORCE)"); err != nil {
		return "", nil, fmt.Errorf("drop old %s: %w", name, err)
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+id); err != nil {
		return "", nil, fmt.Errorf("create database %s: %w", name, err)
	}
	dsn, err := withDatabase(serverDSN, name)
	if err != nil {
		return "", nil, err
	}
	drop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		c, err := pgx.Connect(ctx, serverDSN)
		if err != nil {
			return
		}
		defer c.Close(ctx)
		_, _ = c.Exec(ctx, "DROP DATABASE IF EXISTS "+id+" WITH (FORCE)")
	}
	return dsn, drop, nil
}

func withDatabase(dsn, name string) (string, error) {
	if strings.Contains(dsn, "://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", fmt.Errorf("parse DSN: %w", err)
		}
		u.Path = "/" + name
		return u.String(), nil
	}
	return dsn + " dbname=" + name, nil
}
