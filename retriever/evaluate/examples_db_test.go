package evaluate

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/catalog"
	"github.com/atriumdb/atrium/catalog/benchload"
	"github.com/atriumdb/atrium/migrations"
	"github.com/atriumdb/atrium/retriever"
	"github.com/atriumdb/atrium/retriever/vocab"
	"github.com/atriumdb/atrium/test/testdb"
)

// The --examples split path end to end on a two-database benchmark: the
// even questions land in atrium.examples, the retriever loads them, the
// report counts the odd ones and carries both methods and the buckets.
func TestEvaluateExampleSplit(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tables.json"), []byte(`[
 {"db_id": "shop", "table_names_original": ["buyer", "purchase"], "table_names": ["buyer", "purchase"],
  "column_names_original": [[-1, "*"], [0, "buyer_id"], [0, "full_name"], [1, "purchase_id"], [1, "buyer_id"], [1, "units"]],
  "column_types": ["text", "number", "text", "number", "number", "number"], "primary_keys": [1, 3], "foreign_keys": [[4, 1]]},
 {"db_id": "zoo", "table_names_original": ["animal", "keeper"], "table_names": ["animal", "keeper"],
  "column_names_original": [[-1, "*"], [0, "animal_id"], [0, "species"], [1, "keeper_id"], [1, "name"]],
  "column_types": ["text", "number", "text", "number", "text"], "primary_keys": [1, 3], "foreign_keys": []}
]`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "dev.json"), []byte(`[
 {"db_id": "shop", "question": "Which buyers bought the most units last year?", "query": "SELECT b.full_name FROM buyer b JOIN purchase p ON p.buyer_id = b.buyer_id GROUP BY 1 ORDER BY sum(p.units) DESC"},
 {"db_id": "shop", "question": "Which buyers bought the most units?", "query": "SELECT b.full_name FROM buyer b JOIN purchase p ON p.buyer_id = b.buyer_id GROUP BY 1 ORDER BY sum(p.units) DESC"},
 {"db_id": "zoo", "question": "Which species live here?", "query": "SELECT species FROM animal"},
 {"db_id": "zoo", "question": "Name every keeper.", "query": "SELECT name FROM keeper"}
]`), 0o644))
	bench, err := benchload.LoadBench(dir, "")
	require.NoError(t, err)
	dsn := testdb.New(t, "vector", "pg_trgm")
	pool, err := retriever.OpenPool(ctx, dsn, 100, nil)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	_, err = migrations.Up(ctx, pool, migrations.Options{})
	require.NoError(t, err)
	_, err = benchload.Load(ctx, pool, dir, benchload.Options{DBIDs: bench.PoolDBIDs()})
	require.NoError(t, err)
	// The embedder the shipped scorer was trained with.
	emb, err := vocab.NewDefaultEmbedder()
	require.NoError(t, err)
	_, err = catalog.Sync(ctx, pool, catalog.SyncOptions{Embedder: emb})
	require.NoError(t, err)

	exs, evs := SplitExamples(bench.Questions)
	require.Len(t, exs, 2)
	require.NoError(t, insertExamples(ctx, pool, bench, exs))
	var n int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM atrium.examples WHERE 'shop.buyer' = ANY (tables) OR 'zoo.animal' = ANY (tables)`).Scan(&n))
	require.Equal(t, 2, n)
	bench.Questions = evs
	r, err := retriever.New(pool, retriever.Config{}, retriever.Options{Embedder: emb})
	require.NoError(t, err)
	rep, err := Evaluate(ctx, r, bench, EvalOptions{Examples: true, ExampleCount: len(exs),
		ExampleGrid: []retriever.ExampleParams{{Weight: 4, Gate: 0.45, Penalty: 4}}})
	require.NoError(t, err)
	require.Equal(t, 2, rep.Questions)
	require.Contains(t, rep.Methods, MethodDefault)
	require.Contains(t, rep.Methods, MethodNoExamples)
	require.NotNil(t, rep.ExampleSplit)
	require.Equal(t, 2, rep.ExampleSplit.Examples)
	total := 0
	for _, b := range rep.ExampleSplit.Buckets {
		total += b.Questions
	}
	require.Equal(t, 2, total)
	require.Len(t, rep.ExampleSplit.Grid, 1)
	// The paraphrase of the shop example gets both its tables.
	require.Equal(t, 1.0, rep.Methods[MethodDefault].CompleteRecall)
	require.GreaterOrEqual(t, rep.Methods[MethodDefault].F1, rep.Methods[MethodNoExamples].F1)
}
