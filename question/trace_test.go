package question

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/internal/telemetry"
	"github.com/atriumdb/atrium/sqlgen"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestOneTracerPerQuestion: RETRIEVE and an nl question each report to one
// sqlgen.Tracer, which yields one record (the query log's and the
// retrieval metrics' source, with what the asking role may read) and one
// log line with the same request id.
func TestOneTracerPerQuestion(t *testing.T) {
	var (
		mu   sync.Mutex
		recs []sqlgen.QuestionRecord
		logs lockedBuffer
	)
	log, err := telemetry.NewLogger(&logs, "json", "info")
	require.NoError(t, err)
	e := newEnv(t, envOpts{noLLM: true, logger: log, onQuestion: func(ctx context.Context, r sqlgen.QuestionRecord) {
		require.Equal(t, r.RequestID, telemetry.RequestID(ctx))
		mu.Lock()
		recs = append(recs, r)
		mu.Unlock()
	}})
	role := e.newRole(t, "GRANT USAGE ON SCHEMA shop TO %[1]s; GRANT SELECT ON shop.customers TO %[1]s")
	c := e.connect(t, role)
	a := c.ask(t, "RETRIEVE customers in Aruba and their orders")
	require.Nil(t, a.err)
	a = c.ask(t, "/* nl: customers in Aruba and their orders */")
	require.NotNil(t, a.err)
	require.Equal(t, "55000", a.err.Code)

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, recs, 2)
	ret, nl := recs[0], recs[1]
	require.Equal(t, sqlgen.KindRetrieve, ret.Kind)
	require.Equal(t, sqlgen.KindNL, nl.Kind)
	for _, r := range []sqlgen.QuestionRecord{ret, nl} {
		require.NotNil(t, r.Retrieval, "%s: no retrieval in the record", r.Kind)
		require.Equal(t, []string{"shop.customers"}, r.Tables, "%s: only what the role may read", r.Kind)
		require.Equal(t, 1, r.Retrieval.Chosen)
		require.Contains(t, r.Stages, "retrieve")
		require.Contains(t, r.Stages, "retrieve_total")
		require.NotZero(t, r.CatalogVersion)
		var lines []string
		for _, l := range strings.Split(logs.String(), "\n") {
			if strings.Contains(l, `"msg":"question finished"`) && strings.Contains(l, `"request_id":"`+r.RequestID+`"`) {
				lines = append(lines, l)
			}
		}
		require.Len(t, lines, 1, "%s: want one log line: %s", r.Kind, logs.String())
		require.Contains(t, lines[0], `"kind":"`+r.Kind+`"`)
	}
	require.NotZero(t, ret.Rows)
	require.Equal(t, "55000", nl.SQLState)
}
