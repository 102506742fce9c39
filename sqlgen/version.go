package sqlgen

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// RowQuerier runs one query for one row (*pgxpool.Pool, *pgx.Conn).
type RowQuerier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// CatalogVersion reads atrium.catalog_state.version, remembering it for
// MaxAge so that a cache hit costs no catalog round trip. A catalog change is
// therefore seen by cache keys within MaxAge. Safe for concurrent use.
type CatalogVersion struct {
	db     RowQuerier
	maxAge time.Duration
	now    func() time.Time

	mu      sync.Mutex
	version int64
	readAt  time.Time
}

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
	if err := c.db.QueryRow(ctx, "SELECT version FROM atrium.catalog_state").Scan(&v); err != nil {
		return 0, fmt.Errorf("read the catalog version: %w", err)
	}
	c.version, c.readAt = v, c.now()
	return v, nil
}
