package sqlgen

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// RowQuerier runs one query for one row (*pgxpool.Pool, *pgx.Conn).
type RowQuerier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// CatalogVersion reads the version the result cache keys on, remembering it
// for MaxAge so that a cache hit costs no catalog round trip. A change is
// therefore seen by cache keys within MaxAge. Safe for concurrent use.
//
// The version is atrium.catalog_state.version + learning_version: an answer
// depends on the catalog (version, moved by every sync that changes it) and
// on what Atrium learnt (learning_version, moved by every change to
// atrium.examples or atrium.glossary and by every "wrong" verdict in
// atrium.feedback). Both counters only ever grow, so their sum grows
// whenever either moves and never returns to a value an older key used: a
// cached answer built from an old example, glossary term or a judged-wrong
// generation is never served again. (Retrieval's table snapshot keys on
// version alone: adding an example does not rebuild it.)
type CatalogVersion struct {
	db     RowQuerier
	maxAge time.Duration
	now    func() time.Time

	mu      sync.Mutex
	version int64
	readAt  time.Time
}

// versionSQL reads the cache's version; see CatalogVersion.
const versionSQL = "SELECT version + learning_version FROM atrium.catalog_state"

// NewCatalogVersion returns a VersionSource over the catalog database db.
// maxAge 0 means one second; negative reads the version every time.
func NewCatalogVersion(db RowQuerier, maxAge time.Duration) *CatalogVersion {
	if maxAge == 0 {
		maxAge = time.Second
	}
	return &CatalogVersion{db: db, maxAge: maxAge, now: time.Now}
}

// CatalogVersion implements VersionSource. Concurrent callers wait for one
// read rather than each querying.
func (c *CatalogVersion) CatalogVersion(ctx context.Context) (int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.maxAge > 0 && !c.readAt.IsZero() && c.now().Sub(c.readAt) < c.maxAge {
		return c.version, nil
	}
	var v int64
	if err := c.db.QueryRow(ctx, versionSQL).Scan(&v); err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "42703" { // undefined_column
			return 0, fmt.Errorf("read the catalog version: the catalog schema predates migration 0020 (no learning_version); run `atrium migrate`: %w", err)
		}
		return 0, fmt.Errorf("read the catalog version: %w", err)
	}
	c.version, c.readAt = v, c.now()
	return v, nil
}
