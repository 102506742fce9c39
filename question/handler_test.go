package question

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/catalog"
	"github.com/atriumdb/atrium/proxy"
	"github.com/atriumdb/atrium/retriever"
	"github.com/atriumdb/atrium/test/testdb"
)

func TestHandler(t *testing.T) {
	e := newEnv(t, envOpts{noLLM: true})
	h := e.h
	ctx := context.Background()

	st, err := h.Intercept(ctx, proxy.SessionInfo{}, "SELECT 1")
	require.NoError(t, err)
	require.Nil(t, st)

	st, err = h.Intercept(ctx, proxy.SessionInfo{}, "-- Metabase:: user 1\n/* hi */ retrieve  customers in Aruba and their orders;")
	require.NoError(t, err)
	require.NotNil(t, st)
	fields, err := st.Describe(ctx, nil)
	require.NoError(t, err)
	require.Len(t, fields, 7)
	require.Equal(t, "join_path", string(fields[6].Name))
	sink := &rowSink{}
	tag, err := st.Execute(ctx, nil, sink)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(tag, "SELECT "))
	require.NotEmpty(t, sink.rows)
	require.Equal(t, "1", sink.rows[0][0])
	require.Equal(t, "t", sink.rows[0][4])

	_, err = h.Intercept(ctx, proxy.SessionInfo{}, "RETRIEVE ;")
	var pe *proxy.Error
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "22023", pe.Code)

	// A second statement after the question's semicolon is refused, not
	// read as part of the question; a quoted question keeps its own.
	_, err = h.Intercept(ctx, proxy.SessionInfo{}, "RETRIEVE customers; RETRIEVE orders")
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "0A000", pe.Code)
	require.Contains(t, pe.Hint, "quote the question")
	_, err = h.Intercept(ctx, proxy.SessionInfo{}, "/* nl: customers */; /* nl: orders */")
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "0A000", pe.Code)
	require.Contains(t, pe.Message, "only statement")
	st, err = h.Intercept(ctx, proxy.SessionInfo{}, "RETRIEVE 'customers; and their orders';")
	require.NoError(t, err)
	require.Equal(t, "customers; and their orders", st.(*retrieveStatement).question)

	for _, sql := range []string{"/* nl: x */", "-- nl-sql: x"} {
		st, err = h.Intercept(ctx, proxy.SessionInfo{}, sql)
		require.NoError(t, err)
		require.NotNil(t, st, sql)
	}
}

// TestRetrieveCatalogNotBuilt: RETRIEVE against a database without a
// catalog answers SQLSTATE 55000.
func TestRetrieveCatalogNotBuilt(t *testing.T) {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, testdb.New(t, "vector"))
	require.NoError(t, err)
	defer pool.Close()
	r, err := retriever.New(pool, retriever.Config{}, retriever.Options{Embedder: catalog.NewBuiltinEmbedder(0)})
	require.NoError(t, err)
	h, err := New(Config{}, Options{Retriever: r})
	require.NoError(t, err)
	st, err := h.Intercept(ctx, proxy.SessionInfo{}, "RETRIEVE how many customers")
	require.NoError(t, err)
	_, err = st.Execute(ctx, nil, &rowSink{})
	var pe *proxy.Error
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "55000", pe.Code)
}
