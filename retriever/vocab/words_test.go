package vocab

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/catalog"
)

func TestWordsEmbedderContract(t *testing.T) {
	e, err := NewWordsEmbedder(Default())
	require.NoError(t, err)
	require.Equal(t, WordsEmbedderName, e.Name())
	require.Equal(t, catalog.DefaultBuiltinDimension+Default().Embeddings().Dim(), e.Dimension())

	texts := []string{"table staff: columns staff_id, first_name, hire_date", "", "id integer primary key", "漢字 café"}
	a, err := e.Embed(context.Background(), texts)
	require.NoError(t, err)
	b, err := e.Embed(context.Background(), texts)
	require.NoError(t, err)
	require.Equal(t, a, b, "deterministic: the catalog and the questions must agree")
	for i, v := range a {
		require.Len(t, v, e.Dimension(), texts[i])
	}
	require.InDelta(t, 1, math.Sqrt(dot(a[0], a[0])), 1e-5, "unit length")
	require.Zero(t, dot(a[1], a[1]), "an empty text stays all zeros")
	// Boilerplate alone has no word-vector part: only the hashed features.
	for _, x := range a[2][catalog.DefaultBuiltinDimension:] {
		require.Zero(t, x)
	}
	require.InDelta(t, 1, math.Sqrt(dot(a[2], a[2])), 1e-5)

	_, err = e.Embed(canceled(), texts)
	require.ErrorIs(t, err, context.Canceled)
}

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func canceled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// The reason for the embedder: the hashed features put a synonym as far as
// an unrelated word; the word vectors do not.
func TestWordsEmbedderRelatesSynonyms(t *testing.T) {
	words, err := NewWordsEmbedder(Default())
	require.NoError(t, err)
	hashed := catalog.NewBuiltinEmbedder(0)
	for _, c := range []struct{ doc, synonym, unrelated string }{
		{"table university: columns name, founded, enrollment", "how many campuses are there", "how many volcanoes are there"},
		{"table staff: columns name, salary, department", "list every employee", "list every asteroid"},
		{"table documents: columns title, created", "which files were created last", "which rivers were created last"},
	} {
		doc := words.Vector(c.doc)
		syn, unrel := catalog.Cosine(doc, words.Vector(c.synonym)), catalog.Cosine(doc, words.Vector(c.unrelated))
		require.Greater(t, syn, unrel+0.05, "%q: synonym %.3f, unrelated %.3f", c.doc, syn, unrel)
		hdoc := hashed.Vector(c.doc)
		hsyn, hunrel := catalog.Cosine(hdoc, hashed.Vector(c.synonym)), catalog.Cosine(hdoc, hashed.Vector(c.unrelated))
		require.Less(t, hsyn, hunrel+0.05, "%q: the hashed features alone do not relate them (%.3f, %.3f)", c.doc, hsyn, hunrel)
	}
	// Folded identifiers are segmented before their vectors are looked up.
	folded := catalog.Cosine(words.Vector("customername"), words.Vector("customer name"))
	require.Greater(t, folded, 0.6)
}

func TestNewEmbedderKinds(t *testing.T) {
	e, err := NewEmbedder(catalog.EmbedderConfig{Kind: "words"})
	require.NoError(t, err)
	require.Equal(t, WordsEmbedderName, e.Name())
	e, err = NewEmbedder(catalog.EmbedderConfig{Kind: "WORDS", Dimension: e.Dimension()})
	require.NoError(t, err, "the words embedder's own dimension is accepted")
	require.Equal(t, WordsEmbedderName, e.Name())
	_, err = NewEmbedder(catalog.EmbedderConfig{Kind: "words", Dimension: 128})
	require.ErrorContains(t, err, "fixed at")

	e, err = NewEmbedder(catalog.EmbedderConfig{Kind: "builtin", Dimension: 64})
	require.NoError(t, err)
	require.Equal(t, "builtin-v1", e.Name())
	require.Equal(t, 64, e.Dimension())

	d, err := NewEmbedder(catalog.EmbedderConfig{Kind: DefaultEmbedderKind})
	require.NoError(t, err, "the default kind is built in")
	require.NotNil(t, d)
	unset, err := NewEmbedder(catalog.EmbedderConfig{})
	require.NoError(t, err)
	require.Equal(t, d.Name(), unset.Name(), "no kind is the default kind, not catalog's builtin")

	_, err = NewEmbedder(catalog.EmbedderConfig{Kind: "glove"})
	require.ErrorIs(t, err, catalog.ErrUnknownEmbedder)
	require.ErrorContains(t, err, EmbedderKinds)
}
