package retriever

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkWordLegNearest is the leg's pass over a 100,000-table catalog.
func BenchmarkWordLegNearest(b *testing.B) {
	const dim, n = 100, 100_000
	r := rand.New(rand.NewPCG(1, 2))
	wv := &wordVectors{dim: dim}
	v := make([]float32, dim)
	for range n {
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		wv.add(unit(v))
	}
	q := make([]float32, dim)
	for i := range q {
		q[i] = float32(r.NormFloat64())
	}
	q = unit(q)
	b.ResetTimer()
	for range b.N {
		wv.nearest(q, wordLegSlots)
	}
}
