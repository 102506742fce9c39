// Package migrations holds the versioned SQL that creates and upgrades the
// atrium catalog schema, embedded in the binary, and the runner that applies
// it.
//
// Migrations are files named NNNN_description.sql. Up applies the ones not
// yet recorded in atrium.schema_migrations, each in its own transaction
// together with its record, while holding a session advisory lock so that
// two processes starting at once (several `atrium serve --migrate`) apply
// each migration exactly once. A migration that fails rolls back whole and
// stops the run; the ones before it stay applied.
package migrations

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed *.sql
var embedded embed.FS

// LockKey is the advisory lock (pg_advisory_lock(LockClass, LockKey)) held
// while migrations run. The catalog sync uses the same class with other keys.
const (
	LockClass = 0x61747269 // "atri"
	LockKey   = 1
)

// Migration is one versioned SQL file.
type Migration struct {
	Version  int
	Name     string // file name, e.g. 0001_catalog.sql
	SQL      string
	Checksum string // hex sha256 of SQL
}

// Options configures Up. The zero value applies the embedded migrations and
// logs nothing.
type Options struct {
	// Logger receives one line per applied migration; nil discards.
	Logger *slog.Logger
	// Source replaces the embedded migrations (tests use it to apply a
	// deliberately broken one); nil means the embedded files.
	Source fs.FS
}

// Result says what Up did.
type Result struct {
	Applied []Migration // migrations applied by this call, in order
	Current int         // schema version after the call
}

// ErrChecksum reports that an applied migration's file changed since.
var ErrChecksum = errors.New("migrations: applied migration differs from the embedded file")

// Load parses the migrations in fsys (nil: the embedded ones), sorted by
// version.
func Load(fsys fs.FS) ([]Migration, error) {
	if fsys == nil {
		fsys = embedded
	}
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return nil, fmt.Errorf("migrations: list: %w", err)
	}
	var out []Migration
	seen := map[int]string{}
	for _, name := range names {
		base := path.Base(name)
		num, _, ok := strings.Cut(base, "_")
		if !ok {
			return nil, fmt.Errorf("migrations: %s: name must be NNNN_description.sql", base)
		}
		v, err := strconv.Atoi(num)
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("migrations: %s: bad version %q", base, num)
		}
		if prev, dup := seen[v]; dup {
			return nil, fmt.Errorf("migrations: %s and %s share version %d", prev, base, v)
		}
		seen[v] = base
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("migrations: read %s: %w", base, err)
		}
		sum := sha256.Sum256(b)
		out = append(out, Migration{Version: v, Name: base, SQL: string(b), Checksum: hex.EncodeToString(sum[:])})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}

// Latest is the highest embedded migration version.
func Latest() int {
	ms, err := Load(nil)
	if err != nil || len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].Version
}

const bootstrap = `
CREATE SCHEMA IF NOT EXISTS atrium;
CREATE TABLE IF NOT EXISTS atrium.schema_migrations (
    version    integer PRIMARY KEY,
    name       text        NOT NULL,
    checksum   text        NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE atrium.schema_migrations IS 'Catalog schema migrations applied by atrium migrate, one row each.';`

// Up applies every pending migration to the database behind pool.
func Up(ctx context.Context, pool *pgxpool.Pool, opts Options) (Result, error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("migrations: acquire connection: %w", err)
	}
	defer conn.Release()
	return UpConn(ctx, conn.Conn(), opts)
}

// UpDSN connects to dsn and applies every pending migration.
func UpDSN(ctx context.Context, dsn string, opts Options) (Result, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return Result{}, fmt.Errorf("migrations: connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	return UpConn(ctx, conn, opts)
}

// UpConn applies every pending migration over conn, which must not be in a
// transaction. The advisory lock is a session lock on conn.
func UpConn(ctx context.Context, conn *pgx.Conn, opts Options) (res Result, err error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ms, err := Load(opts.Source)
	if err != nil {
		return Result{}, err
	}
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1, $2)", int32(LockClass), int32(LockKey)); err != nil {
		return Result{}, fmt.Errorf("migrations: take advisory lock: %w", err)
	}
	defer func() {
		// The unlock must run even when ctx was cancelled, or the lock stays
		// with a pooled connection.
		if _, uerr := conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1, $2)", int32(LockClass), int32(LockKey)); uerr != nil && err == nil {
			err = fmt.Errorf("migrations: release advisory lock: %w", uerr)
		}
	}()
	if _, err := conn.Exec(ctx, bootstrap); err != nil {
		return Result{}, fmt.Errorf("migrations: create atrium.schema_migrations: %w", err)
	}
	applied := map[int]string{}
	rows, err := conn.Query(ctx, "SELECT version, checksum FROM atrium.schema_migrations")
	if err != nil {
		return Result{}, fmt.Errorf("migrations: read applied: %w", err)
	}
	for rows.Next() {
		var v int
		var sum string
		if err := rows.Scan(&v, &sum); err != nil {
			return Result{}, fmt.Errorf("migrations: read applied: %w", err)
		}
		applied[v] = sum
		res.Current = max(res.Current, v)
	}
	if err := rows.Err(); err != nil {
		return Result{}, fmt.Errorf("migrations: read applied: %w", err)
	}
	for _, m := range ms {
		if sum, ok := applied[m.Version]; ok {
			if sum != m.Checksum {
				// Not fatal: a migration edited after it ran changes nothing
				// now, but whoever edited it should know.
				log.Warn("applied migration differs from the embedded file", "migration", m.Name, "err", ErrChecksum)
			}
			continue
		}
		if err := apply(ctx, conn, m); err != nil {
			return res, err
		}
		log.Info("applied migration", "migration", m.Name)
		res.Applied = append(res.Applied, m)
		res.Current = max(res.Current, m.Version)
	}
	return res, nil
}

func apply(ctx context.Context, conn *pgx.Conn, m Migration) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return fmt.Errorf("migrations: %s: begin: %w", m.Name, err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // no-op after Commit
	// Simple protocol: a migration is many statements in one string.
	if _, err := tx.Exec(ctx, m.SQL, pgx.QueryExecModeSimpleProtocol); err != nil {
		return fmt.Errorf("migrations: %s failed and was rolled back: %w", m.Name, err)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO atrium.schema_migrations (version, name, checksum) VALUES ($1, $2, $3)",
		m.Version, m.Name, m.Checksum); err != nil {
		return fmt.Errorf("migrations: %s: record: %w", m.Name, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("migrations: %s: commit: %w", m.Name, err)
	}
	return nil
}

// Current returns the highest applied version, or 0 when the catalog schema
// has not been created.
func Current(ctx context.Context, q interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}) (int, error) {
	var exists bool
	if err := q.QueryRow(ctx, "SELECT to_regclass('atrium.schema_migrations') IS NOT NULL").Scan(&exists); err != nil {
		return 0, fmt.Errorf("migrations: read current version: %w", err)
	}
	if !exists {
		return 0, nil
	}
	var v int
	if err := q.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM atrium.schema_migrations").Scan(&v); err != nil {
		return 0, fmt.Errorf("migrations: read current version: %w", err)
	}
	return v, nil
}
