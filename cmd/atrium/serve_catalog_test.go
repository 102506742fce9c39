package main

import (
	"testing"

	"github.com/atriumdb/atrium/internal/querylog"
	"github.com/atriumdb/atrium/internal/telemetry"
)

// Without --catalog-dsn the query log must see a nil database: a non-nil
// interface holding a nil pool started the query log anyway, and its first
// retention purge crashed serve about a minute after start-up.
func TestNoCatalogMeansNoQueryLogDB(t *testing.T) {
	c := &catalogConn{}
	// Assign to the interfaces opsDeps holds, as serve does.
	var db querylog.DB = c.writeDB()
	if db != nil {
		t.Fatalf("writeDB() = %#v without a catalog, want a nil interface", db)
	}
	var p telemetry.Pinger = c.pinger()
	if p != nil {
		t.Fatalf("pinger() = %#v without a catalog, want a nil interface", p)
	}
}
