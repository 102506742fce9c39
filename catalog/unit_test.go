package catalog

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/internal/ident"
)

func TestBuiltinEmbedderContract(t *testing.T) {
	e := NewBuiltinEmbedder(0)
	require.Equal(t, "builtin-v1", e.Name())
	require.Equal(t, 256, e.Dimension())
	vs, err := e.Embed(context.Background(), []string{"singer_id of the Singers", "SingerID singer", "", "stadium capacity"})
	require.NoError(t, err)
	var n float64
	for _, x := range vs[0] {
		n += float64(x) * float64(x)
	}
	require.InDelta(t, 1, math.Sqrt(n), 1e-5)
	require.Equal(t, make([]float32, 256), vs[2], "empty text embeds to zeros")
	// camelCase, snake_case and plural forms meet.
	require.Greater(t, Cosine(vs[0], vs[1]), Cosine(vs[0], vs[3]))
	// The function is frozen: these values are what every catalog built by
	// builtin-v1 holds. Changing them needs a new Name.
	v := e.Vector("singer")
	var sum, abs float64
	for i, x := range v {
		sum += float64(x) * float64(i+1)
		abs += math.Abs(float64(x))
	}
	require.InDelta(t, 2.132007, abs, 1e-4)
	require.InDelta(t, -116.62079, sum, 1e-3)
}

func TestStem(t *testing.T) {
	for in, want := range map[string]string{"singers": "singer", "countries": "country", "address": "address",
		"addresses": "address", "status": "status", "analysis": "analysis", "bus": "bus", "id": "id"} {
		require.Equal(t, want, stem(in), in)
	}
}

func TestQualifiedName(t *testing.T) {
	require.Equal(t, "singer_id", qualifiedName("singers", "id"))
	require.Equal(t, "singer_id", qualifiedName("singer", "singer_id"))
	require.Equal(t, "country_code", qualifiedName("Country", "Code"))
}

func TestSchemaFilter(t *testing.T) {
	f, err := newSchemaFilter([]string{"sales,hr*"}, []string{"hr_old", "sales.tmp_*"})
	require.NoError(t, err)
	require.True(t, f.match("sales", "orders"))
	require.False(t, f.match("sales", "tmp_1"))
	require.True(t, f.match("hr", "x"))
	require.True(t, f.match("hr2", "x"))
	require.False(t, f.match("hr_old", "x"))
	require.False(t, f.match("public", "x"))
	all, err := newSchemaFilter(nil, nil)
	require.NoError(t, err)
	require.True(t, all.match("public", "x"))
	require.False(t, all.match("atrium", "tables"))
	require.False(t, all.match("pg_catalog", "pg_class"))
	_, err = newSchemaFilter([]string{"["}, nil)
	require.Error(t, err)
}

func TestParseDescription(t *testing.T) {
	d, err := parseDescription("Here you go:\n```json\n{\"purpose\": \" Concerts held. \", \"columns\": {\"year\": \"Year held\"}}\n```")
	require.NoError(t, err)
	require.Equal(t, "Concerts held.", d.Purpose)
	require.Equal(t, "Year held", d.Columns["year"])
	_, err = parseDescription("no json")
	require.Error(t, err)
}

// A large table is sampled by pages with a fixed seed: two syncs of the
// same data read the same rows, so the catalog they build is the same.
func TestSampleQueryRepeatable(t *testing.T) {
	lim := sampleLimits{rows: 100, columns: 10, valueLen: 80}
	r := &relation{Schema: "shop", Name: "orders", Kind: "table", RelTuples: 1e7,
		Columns: []column{{Name: "id", Type: "bigint"}, {Name: "note", Type: "text"}, {Name: "doc", Type: "bytea"}}}
	sql, cols := sampleQuery(r, lim)
	require.Equal(t, []int{0, 1}, cols)
	require.Equal(t, `SELECT left("id"::text, 80), left("note"::text, 80) FROM "shop"."orders" TABLESAMPLE SYSTEM (0.020000) REPEATABLE (0) LIMIT 100`, sql)
	r.RelTuples = 500 // small: read from the start, no sampling
	sql, _ = sampleQuery(r, lim)
	require.NotContains(t, sql, "TABLESAMPLE")
}

// TestScorePairSmallIntegers: a column of small integers is a subset of any
// serial key as long, so without a name in common it references nothing
// (the sample database's reviews.rating was joined to warehouse_id); a
// column naming the key's table still does, and so do text values.
func TestScorePairSmallIntegers(t *testing.T) {
	s := &syncer{}
	set := func(vs ...string) map[string]struct{} {
		m := map[string]struct{}{}
		for _, v := range vs {
			m[v] = struct{}{}
		}
		return m
	}
	col := func(table, name string, unique bool, vs ...string) *joinColumn {
		c := &joinColumn{table: table, name: name, unique: unique, pk: unique, complete: true, values: set(vs...)}
		c.norm = strings.Join(ident.Split(name), "")
		c.qual = strings.ReplaceAll(qualifiedName(table, name), "_", "")
		return c
	}
	key := col("warehouses", "warehouse_id", true, "1", "2", "3", "4", "5", "6")
	_, ok, err := s.scorePair(context.Background(), "shop", col("reviews", "rating", false, "1", "3", "5"), key)
	require.NoError(t, err)
	require.False(t, ok, "ratings are no warehouses")
	_, ok, err = s.scorePair(context.Background(), "shop", col("stock", "source_warehouse", false, "1", "3"), key)
	require.NoError(t, err)
	require.True(t, ok, "the name says which key")
	codes := col("currencies", "iso", true, "EUR", "USD", "GBP")
	_, ok, err = s.scorePair(context.Background(), "shop", col("prices", "unit", false, "EUR", "USD"), codes)
	require.NoError(t, err)
	require.True(t, ok, "a subset of distinct text codes is evidence of its own")
}
