package atrtrain

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/catalog/benchload"
	"github.com/atriumdb/atrium/retriever"
	"github.com/atriumdb/atrium/retriever/vocab"
	"github.com/atriumdb/atrium/test/testdb"
)

// TestSchemaVariant: a renamed copy keeps the database's shape (tables,
// columns, keys by index), renames through its maps, keeps names unique
// and is the same for the same seed.
func TestSchemaVariant(t *testing.T) {
	db := &benchload.Database{
		DBID:       "Concert_Singer",
		TableNames: []string{"singer", "concert", "singer_in_concert", "stadium"},
		ColumnNames: [][2]any{{float64(-1), "*"},
			{float64(0), "Singer_ID"}, {float64(0), "Name"}, {float64(0), "Country"}, {float64(0), "Song_Name"}, {float64(0), "Age"},
			{float64(1), "concert_ID"}, {float64(1), "concert_Name"}, {float64(1), "Year"}, {float64(1), "Stadium_ID"},
			{float64(2), "concert_ID"}, {float64(2), "Singer_ID"},
			{float64(3), "Stadium_ID"}, {float64(3), "Location"}, {float64(3), "Capacity"}, {float64(3), "Average"}},
		ColumnTypes: []string{"text", "number", "text", "text", "text", "number", "number", "text", "text", "number", "number", "number", "number", "text", "number", "number"},
		ForeignKeys: [][2]int{{11, 1}, {10, 6}, {9, 12}},
	}
	rn := newRenamer(vocab.Default(), DefaultRenameOptions(0))
	rn.renameWord = 1 // every word that can be renamed is
	a := rn.variant(db, rand.New(rand.NewPCG(1, 2)))
	b := rn.variant(db, rand.New(rand.NewPCG(1, 2)))
	require.Equal(t, a.db, b.db)
	require.Equal(t, "concert_singer_aug", a.schema)
	require.Len(t, a.db.TableNames, len(db.TableNames))
	require.Len(t, a.db.ColumnNames, len(db.ColumnNames))
	require.Equal(t, db.ForeignKeys, a.db.ForeignKeys)
	changed := 0
	seen := map[string]bool{}
	for i, tn := range db.TableNames {
		nt := a.db.TableNames[i]
		require.False(t, seen[nt], "duplicate table name %s", nt)
		seen[nt] = true
		require.Equal(t, "concert_singer_aug."+nt, a.mapTable("concert_singer."+strings.ToLower(tn)))
		if nt != strings.ToLower(tn) {
			changed++
		}
	}
	require.Positive(t, changed, "renamed tables: %v", a.db.TableNames)
	// singer has Spider-Syn substitutes (vocalist…): it is renamed.
	require.NotEqual(t, "singer", a.db.TableNames[0])
	for i := 1; i < len(db.ColumnNames); i++ {
		ti, name, _ := db.Column(i)
		_, nn, ok := a.db.Column(i)
		require.True(t, ok)
		require.Equal(t, nn, a.mapColumn("concert_singer."+db.TableNames[ti], strings.ToLower(name)))
	}
	_, err := benchload.SchemaDDL(a.db)
	require.NoError(t, err)
}

// TestAugmentedTraining: with --augment-schemas the renamed copies are
// loaded beside the originals and training questions are asked against
// them, their gold tables mapped to the copies' names.
func TestAugmentedTraining(t *testing.T) {
	dir := spiderTrainDir(t)
	ctx := context.Background()
	job := TrainJob{BenchDir: dir, ServerDSN: testdb.AdminDSN(),
		Train: TrainConfig{Epochs: 1, Limit: 80, AugmentSchemas: 1, ValidByDB: true}}
	m, err := RunTraining(ctx, job)
	require.NoError(t, err)
	require.Contains(t, m.Training.Data, "renamed copies")
	require.Positive(t, m.Training.Windows)
	_, err = retriever.ParseLiteModel(mustJSON(t, m))
	require.NoError(t, err)
}

// TestAugmentedGold: gold tables map to the copy's names; a table the
// renamer left alone keeps its name in the copy's schema.
func TestAugmentedGold(t *testing.T) {
	v := &schemaVariant{schema: "x_aug", tables: map[string]string{"singer": "vocalist"}}
	require.Equal(t, "x_aug.vocalist", v.mapTable("x.singer"))
	require.Equal(t, "x_aug.concert", v.mapTable("x.concert"))
}

// TestUnanswerableTraining: with --unanswerable, training questions are
// also asked against pools without their database, and the weights say how
// many were.
func TestUnanswerableTraining(t *testing.T) {
	dir := spiderTrainDir(t)
	ctx := context.Background()
	job := TrainJob{BenchDir: dir, ServerDSN: testdb.AdminDSN(),
		Train: TrainConfig{Epochs: 1, Limit: 80, Unanswerable: 1}}
	m, err := RunTraining(ctx, job)
	require.NoError(t, err)
	require.Contains(t, m.Training.Data, "also asked unanswerable")
	// Every training question but the held-out 15% is asked again without
	// its database, unless another database of the pool answers it by
	// its tables' names.
	require.Greater(t, m.Training.Unanswerable, m.Training.Questions/2)
	require.LessOrEqual(t, m.Training.Unanswerable, m.Training.Questions*85/100+1)
}
