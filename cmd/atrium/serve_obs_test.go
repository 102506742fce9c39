package main

import (
	"context"
	"flag"
	"io"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/migrations"
	"github.com/atriumdb/atrium/proxy"
	"github.com/atriumdb/atrium/sqlgen"
	"github.com/atriumdb/atrium/test/testdb"
)

// TestRecorderDerivesFromRecord: the query-log entry, the retrieval metrics
// and the LLM metrics of a question all come from its one QuestionRecord,
// for RETRIEVE and nl alike (they used to come from three separate hooks).
func TestRecorderDerivesFromRecord(t *testing.T) {
	ctx := context.Background()
	dsn := testdb.New(t, "vector", "pg_trgm")
	_, err := migrations.UpDSN(ctx, dsn, migrations.Options{})
	require.NoError(t, err)
	pool, err := pgxpool.New(ctx, dsn)
	require.NoError(t, err)
	defer pool.Close()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := addOpsFlags(fs)
	require.NoError(t, fs.Parse([]string{"--admin-listen", "", "--instance", "rec-0"}))
	o, err := startOps(ctx, f, opsDeps{Catalog: pool, QueryLogDB: pool})
	require.NoError(t, err)
	rec := &recorder{ops: o}

	session := proxy.SessionInfo{User: "analyst", Database: "shop"}
	rec.question(ctx, sqlgen.QuestionRecord{
		RequestID: "rec-retrieve", Start: time.Now(), Session: session, Kind: sqlgen.KindRetrieve, Question: "orders",
		Model: "fake", Tables: []string{"shop.orders"}, Rows: 3, CatalogVersion: 4,
		Stages:    map[string]time.Duration{"retrieve": time.Millisecond, "retrieve_total": time.Millisecond},
		Retrieval: &sqlgen.RetrievalRecord{Stages: map[string]time.Duration{"total": time.Millisecond}, Chosen: 1},
	})
	rec.question(ctx, sqlgen.QuestionRecord{
		RequestID: "rec-nl", Start: time.Now(), Session: session, Kind: sqlgen.KindNL, Question: "orders per day",
		Role: "analyst", Database: "shop", Model: "fake", Tables: []string{"shop.orders"}, SQL: "SELECT 1", Rows: 1,
		Retrieval: &sqlgen.RetrievalRecord{Stages: map[string]time.Duration{"total": time.Millisecond}, Chosen: 1},
		LLMCalls: []sqlgen.LLMCall{{Purpose: sqlgen.PurposeGenerate, Duration: time.Second},
			{Purpose: sqlgen.PurposeRepair, Duration: time.Second, Err: &sqlgen.LLMError{Status: 503, Msg: "busy"}}},
		Err:       &proxy.Error{Code: "58000", Message: "the LLM endpoint failed"},
		ExampleID: 5, FollowUpOf: "rec-retrieve",
	})

	m := o.Metrics
	require.Equal(t, 2.0, testutil.ToFloat64(m.Retrieval.Retrievals.WithLabelValues("ok")))
	require.Equal(t, 1.0, testutil.ToFloat64(m.LLM.Calls.WithLabelValues(sqlgen.PurposeGenerate, "ok")))
	require.Equal(t, 1.0, testutil.ToFloat64(m.LLM.Errors.WithLabelValues("http_5xx")))

	require.NoError(t, o.Close(ctx))
	type row struct {
		kind, role, model, status string
	}
	got := map[string]row{}
	rows, err := pool.Query(ctx, "SELECT request_id, kind, role_name, coalesce(model, ''), status FROM atrium.query_log")
	require.NoError(t, err)
	for rows.Next() {
		var id string
		var r row
		require.NoError(t, rows.Scan(&id, &r.kind, &r.role, &r.model, &r.status))
		got[id] = r
	}
	require.NoError(t, rows.Err())
	require.Equal(t, row{kind: "retrieve", role: "analyst", model: "", status: "ok"}, got["rec-retrieve"])
	require.Equal(t, row{kind: "nl", role: "analyst", model: "fake", status: "error"}, got["rec-nl"])
	var (
		example int64
		of      string
	)
	require.NoError(t, pool.QueryRow(ctx, "SELECT example_id, follow_up_of FROM atrium.query_log WHERE request_id = 'rec-nl'").Scan(&example, &of))
	require.Equal(t, int64(5), example)
	require.Equal(t, "rec-retrieve", of)
}
