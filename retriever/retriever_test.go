package retriever

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/catalog"
	"github.com/atriumdb/atrium/migrations"
	"github.com/atriumdb/atrium/retriever/vocab"
	"github.com/atriumdb/atrium/test/testdb"
)

func setupCatalog(t *testing.T) (*pgxpool.Pool, catalog.Embedder) {
	t.Helper()
	// The embedder the shipped scorer was trained with.
	emb, err := vocab.NewDefaultEmbedder()
	require.NoError(t, err)
	return setupCatalogWith(t, emb)
}

// setupCatalogWith is setupCatalog with the catalog embedded by emb.
func setupCatalogWith(t *testing.T, emb catalog.Embedder) (*pgxpool.Pool, catalog.Embedder) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dsn := testdb.New(t, "vector", "pg_trgm")
	pool, err := OpenPool(ctx, dsn, 100, nil)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	_, err = migrations.Up(ctx, pool, migrations.Options{})
	require.NoError(t, err)
	_, err = pool.Exec(ctx, testdb.ShopSchema)
	require.NoError(t, err)
	_, err = catalog.Sync(ctx, pool, catalog.SyncOptions{Embedder: emb, Schemas: []string{"shop", "zoo"}})
	require.NoError(t, err)
	return pool, emb
}

func chosenNames(res *Result) []string {
	var out []string
	for _, t := range res.Chosen() {
		out = append(out, t.Table.QualifiedName())
	}
	return out
}

// A change of embedder finds a catalog embedded by the old one: retrieval
// fails clearly, naming both, and the same retriever answers again once
// the catalog is synced with the new one (no restart).
func TestRetrieveAfterEmbedderChange(t *testing.T) {
	ctx := context.Background()
	pool, _ := setupCatalogWith(t, catalog.NewBuiltinEmbedder(0))
	emb, err := vocab.NewEmbedder(catalog.EmbedderConfig{Kind: vocab.EmbedderWords})
	require.NoError(t, err)
	r, err := New(pool, Config{}, Options{Embedder: emb})
	require.NoError(t, err)
	const q = "For each product, show its title and the total quantity over all order lines."
	_, err = r.Retrieve(ctx, q)
	var ce *CatalogError
	require.ErrorAs(t, err, &ce)
	require.ErrorContains(t, err, "builtin-v1")
	require.ErrorContains(t, err, emb.Name())

	st, err := catalog.Sync(ctx, pool, catalog.SyncOptions{Embedder: emb, Schemas: []string{"shop", "zoo"}})
	require.NoError(t, err)
	require.Positive(t, st.Reembedded, "only the vectors are rewritten")
	res, err := r.Retrieve(ctx, q)
	require.NoError(t, err)
	require.Contains(t, chosenNames(res), "shop.products")
}

// The first question after a sync sees the new catalog version in the
// candidate query's answer while the retriever still holds the older
// version's lexical index: a table added since must still get its lexical
// score, not compete on its vector alone.
func TestRetrieveRightAfterSync(t *testing.T) {
	ctx := context.Background()
	pool, emb := setupCatalog(t)
	r, err := New(pool, Config{}, Options{Embedder: emb})
	require.NoError(t, err)
	_, err = r.Retrieve(ctx, "Which products are out of stock?") // loads version 1's snapshot and index
	require.NoError(t, err)

	_, err = pool.Exec(ctx, `CREATE TABLE shop.lighthouse_keepers (id int PRIMARY KEY, keeper_name text);
		COMMENT ON TABLE shop.lighthouse_keepers IS 'keepers of the coastal lighthouses'`)
	require.NoError(t, err)
	_, err = catalog.Sync(ctx, pool, catalog.SyncOptions{Embedder: emb, Schemas: []string{"shop", "zoo"}})
	require.NoError(t, err)

	res, err := r.Retrieve(ctx, "List the lighthouse keepers.")
	require.NoError(t, err)
	var lex float64
	for _, c := range res.Candidates {
		if c.Table.QualifiedName() == "shop.lighthouse_keepers" {
			lex = c.LexRaw
		}
	}
	require.Positive(t, lex, "the new table's lexical score")
	require.Contains(t, chosenNames(res), "shop.lighthouse_keepers")
}

func TestRetrieveEndToEnd(t *testing.T) {
	pool, emb := setupCatalog(t)
	r, err := New(pool, Config{}, Options{Embedder: emb})
	require.NoError(t, err)
	ctx := context.Background()

	// Two tables named by their columns (title, quantity) and one join.
	res, err := r.Retrieve(ctx, "For each product, show its title and the total quantity over all order lines.")
	require.NoError(t, err)
	got := chosenNames(res)
	require.Contains(t, got, "shop.products")
	require.Contains(t, got, "shop.order_lines")
	require.NotEmpty(t, res.JoinPaths)
	require.Greater(t, res.Timings.Total, time.Duration(0))
	for _, jp := range res.JoinPaths {
		require.Contains(t, jp.String(), " = ")
	}
	// Candidates are ranked and carry both scores.
	require.NotEmpty(t, res.Candidates)
	require.Equal(t, 1, res.Candidates[0].Rank)

	// A value only the value index knows.
	res, err = r.Retrieve(ctx, "Which items are made by Ford Motor Company?")
	require.NoError(t, err)
	var found bool
	for _, c := range res.Candidates {
		if c.Table.QualifiedName() == "shop.products" {
			found = len(c.Values) > 0
		}
	}
	require.True(t, found, "value hit for shop.products")
}

func TestRetrieveBadInput(t *testing.T) {
	pool, emb := setupCatalog(t)
	r, err := New(pool, Config{MaxQuestionBytes: 100}, Options{Embedder: emb})
	require.NoError(t, err)
	ctx := context.Background()
	_, err = r.Retrieve(ctx, "   ")
	var qe *QuestionError
	require.ErrorAs(t, err, &qe)
	require.Equal(t, "22023", qe.SQLState())
	_, err = r.Retrieve(ctx, strings.Repeat("why ", 100))
	require.ErrorAs(t, err, &qe)
	require.Equal(t, "54000", qe.SQLState())
	// Matches nothing: an empty (or rejected-only) result, not an error.
	res, err := r.Retrieve(ctx, "qwxz vbnm")
	require.NoError(t, err)
	require.NotNil(t, res)
}

func TestRetrieveCatalogNotBuilt(t *testing.T) {
	ctx := context.Background()
	dsn := testdb.New(t, "vector", "pg_trgm")
	pool, err := OpenPool(ctx, dsn, 100, nil)
	require.NoError(t, err)
	defer pool.Close()
	r, err := New(pool, Config{}, Options{Embedder: catalog.NewBuiltinEmbedder(0)})
	require.NoError(t, err)
	_, err = r.Retrieve(ctx, "how many customers")
	var ce *CatalogError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "55000", ce.SQLState())
	require.Contains(t, ce.Error(), "atrium catalog sync")
	require.True(t, errors.Is(err, ErrCatalogNotBuilt))

	// Migrated but never synced: still not built.
	_, err = migrations.Up(ctx, pool, migrations.Options{})
	require.NoError(t, err)
	_, err = r.Retrieve(ctx, "how many customers")
	require.ErrorAs(t, err, &ce)

}
