package vocab

import (
	"bytes"
	"compress/gzip"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/retriever/vocab/vecfile"
)

func TestEmbeddingsRoundTrip(t *testing.T) {
	words := []string{"singer", "vocalist", "stadium"}
	vecs := [][]float32{{1, 0.5, 0}, {0.9, 0.6, 0.05}, {-0.2, 0, 1}}
	var buf bytes.Buffer
	require.NoError(t, vecfile.Write(&buf, words, vecs))
	e, err := ParseEmbeddings(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	for _, w := range words {
		_, ok := e.Cosine(w, w)
		require.True(t, ok, w)
	}
	_, ok := e.Cosine("weather", "weather")
	require.False(t, ok)
	c, ok := e.Cosine("singer", "vocalist")
	require.True(t, ok)
	require.InDelta(t, 0.987, c, 0.01, "int8 quantisation keeps cosines")
	c, ok = e.Cosine("singer", "stadium")
	require.True(t, ok)
	require.Less(t, c, 0.0)
	_, ok = e.Cosine("singer", "weather")
	require.False(t, ok)
	var none *Embeddings
	_, ok = none.Cosine("a", "b")
	require.False(t, ok, "a lexicon without vectors answers, never panics")

	var again bytes.Buffer
	require.NoError(t, vecfile.Write(&again, words, vecs))
	require.Equal(t, buf.Bytes(), again.Bytes(), "deterministic bytes")
}

func TestEmbeddingsRejectsBadInput(t *testing.T) {
	gz := func(s string) *bytes.Reader {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		w.Write([]byte(s))
		w.Close()
		return bytes.NewReader(b.Bytes())
	}
	for name, in := range map[string]*bytes.Reader{
		"not gzip":      bytes.NewReader([]byte("atrium-embeddings 1 1 2\n")),
		"bad magic":     gz("glove 1 1 2\na\n\x01\x02"),
		"bad version":   gz("atrium-embeddings 2 1 2\na\n\x01\x02"),
		"huge header":   gz("atrium-embeddings 1 999999999 2\n"),
		"short vectors": gz("atrium-embeddings 1 2 2\na\nb\n\x01\x02\x03"),
		"short words":   gz("atrium-embeddings 1 2 2\na\n"),
	} {
		_, err := ParseEmbeddings(in)
		require.Error(t, err, name)
	}
	require.Error(t, vecfile.Write(&bytes.Buffer{}, []string{"a"}, nil))
	require.Error(t, vecfile.Write(&bytes.Buffer{}, []string{"a", "b"}, [][]float32{{1, 2}, {1}}))
	require.Error(t, vecfile.Write(&bytes.Buffer{}, []string{"a\nb"}, [][]float32{{1}}))
}

// TestEmbeddedVectors pins what the shipped vectors are for: words the
// WordNet relations do not link are close, unrelated ones are not.
func TestEmbeddedVectors(t *testing.T) {
	e := Default().Embeddings()
	require.NotNil(t, e)
	near := func(a, b string) float64 {
		c, ok := e.Cosine(a, b)
		require.True(t, ok, "%s/%s", a, b)
		return c
	}
	require.Greater(t, near("vocalist", "singer"), 0.6)
	require.Greater(t, near("curriculum", "course"), near("curriculum", "weather"))
	require.Greater(t, near("client", "customer"), near("client", "stadium"))
	require.Less(t, near("singer", "invoice"), 0.3)
}

// TestCosineAt: cosines by resolved position equal cosines by word, and a
// word without a vector resolves to -1 (no cosine, never a panic).
func TestCosineAt(t *testing.T) {
	e := Default().Embeddings()
	for _, p := range [][2]string{{"vocalist", "singer"}, {"client", "customer"}, {"singer", "invoice"}} {
		want, ok := e.Cosine(p[0], p[1])
		require.True(t, ok)
		got, ok := e.CosineAt(e.Index(p[0]), e.Index(p[1]))
		require.True(t, ok)
		require.Equal(t, want, got)
	}
	require.Equal(t, int32(-1), e.Index("zzqxnotaword"))
	_, ok := e.CosineAt(e.Index("zzqxnotaword"), e.Index("singer"))
	require.False(t, ok)
	var none *Embeddings
	require.Equal(t, int32(-1), none.Index("singer"))
	_, ok = none.CosineAt(0, 0)
	require.False(t, ok)
}
