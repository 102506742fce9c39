package retriever

import (
	"context"
	"fmt"
	"testing"

	"github.com/atriumdb/atrium/catalog"
)

// BenchmarkLearningMatch measures matching one question against 1,500
// examples with vectors (the per-question cost of the learning index).
func BenchmarkLearningMatch(b *testing.B) {
	ctx := context.Background()
	emb := catalog.NewBuiltinEmbedder(0)
	li := &learningIndex{idf: map[string]float64{}}
	for i := range 1500 {
		q := fmt.Sprintf("How many %d orders did customer %d place in city %d last year?", i, i%37, i%11)
		li.examples = append(li.examples, &learnedExample{hit: ExampleHit{ID: int64(i), Question: q}, norm: normalizeQuestion(q), ids: []int64{int64(i % 50)}})
	}
	df := map[string]int{}
	for _, le := range li.examples {
		le.stems = distinct(analyze(le.hit.Question, true).stems)
		for _, s := range le.stems {
			df[s]++
		}
	}
	for s, d := range df {
		li.idf[s] = float64(len(li.examples)) / float64(d)
	}
	li.idfMax = 10
	li.index()
	if err := li.embed(ctx, emb); err != nil {
		b.Fatal(err)
	}
	vs, err := emb.Embed(ctx, []string{"How many orders did each customer place?"})
	if err != nil {
		b.Fatal(err)
	}
	q := newQuery("How many orders did each customer place?", vs[0], nil)
	b.ResetTimer()
	for range b.N {
		li.match(q, nil)
	}
}
