package retriever

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/atriumdb/atrium/retriever/vocab"
)

// The word-vector leg of the candidate stage. The lexical list finds a
// table only through a word it shares with the question or a relation the
// vocabulary lists, and the builtin embedder's vectors are hashed words and
// trigrams, to which a synonym is as far as an unrelated word. A user who
// says "universities" for campuses, "staff" for employees or "vendors" for
// suppliers reaches the right table through neither. The lexicon's word
// vectors (GloVe) put those pairs close, so each table also gets the mean
// vector of its words, and the tables nearest the question's mean vector
// join the candidates. They take the last few of the C places, so the
// scorer sees as many candidates as before and, for every candidate the
// other legs found, the same features.

const (
	// wordLegSlots is how many of the C candidate places the word-vector
	// leg's best tables may take (at most a tenth of C).
	wordLegSlots = 5
	// wordNameWeight is how much more a table's name words count in its
	// vector than its columns' words, which are many and often generic.
	wordNameWeight = 2
)

// wordVectors are the tables' unit mean word vectors, quantised to int8
// (a 100,000-table catalog costs 10 MB), in doc order.
type wordVectors struct {
	dim int
	vec []int8
	ok  []bool // doc has a vector
}

// tableWordVector is the unit vector of a table's words: the mean of its
// name words' vectors, weighted wordNameWeight, plus the mean of its
// non-key columns' words' vectors (softTableWords' words), each word
// weighted by Embeddings.SIFWeight; nil when none of its words has a vector.
func tableWordVector(name, cols string, expand func(string) []weightedTerm, emb *vocab.Embeddings) []float32 {
	var colA []analyzed
	for _, c := range strings.Fields(cols) {
		colA = append(colA, analyzeIdent(c, expand))
	}
	nameW, colW := softTableWords(analyzeIdent(name, expand), colA, emb)
	v := make([]float32, emb.Dim())
	found := false
	for _, part := range []struct {
		words  []softWord
		weight float32
	}{{nameW, wordNameWeight}, {colW, 1}} {
		n := 0
		for _, w := range part.words {
			if w.v >= 0 {
				n++
			}
		}
		for _, w := range part.words {
			if n > 0 && emb.AddTo(v, w.v, part.weight*emb.SIFWeight(w.v)/float32(n)) {
				found = true
			}
		}
	}
	if !found {
		return nil
	}
	return unit(v)
}

// questionWordVector is the unit SIF-weighted mean vector of q's
// content words (softQ: generic words and numbers left out); nil when none
// has a vector.
func questionWordVector(q *Query) []float32 {
	if q.emb == nil || len(q.softQ) == 0 {
		return nil
	}
	v := make([]float32, q.emb.Dim())
	found := false
	for _, w := range q.softQ {
		if q.emb.AddTo(v, w.v, q.emb.SIFWeight(w.v)) {
			found = true
		}
	}
	if !found {
		return nil
	}
	return unit(v)
}

// add appends one doc's vector (nil: none).
func (wv *wordVectors) add(v []float32) {
	if v == nil {
		wv.vec = append(wv.vec, make([]int8, wv.dim)...)
		wv.ok = append(wv.ok, false)
		return
	}
	for _, x := range v {
		wv.vec = append(wv.vec, int8(max(-127, min(127, math.Round(float64(x)*127)))))
	}
	wv.ok = append(wv.ok, true)
}

// nearest returns the docs of the k tables whose vectors are nearest qv,
// nearest first (ties by doc).
func (wv *wordVectors) nearest(qv []float32, k int) []int32 {
	if wv == nil || len(qv) != wv.dim || k <= 0 {
		return nil
	}
	q := make([]int32, wv.dim)
	for i, x := range qv {
		q[i] = int32(math.Round(float64(x) * 127))
	}
	type hit struct {
		doc int32
		dot int32
	}
	hits := make([]hit, 0, k+1)
	for d, ok := range wv.ok {
		if !ok {
			continue
		}
		dot := dotInt8(wv.vec[d*wv.dim:(d+1)*wv.dim], q)
		if len(hits) == k && dot <= hits[k-1].dot {
			continue
		}
		// Insertion into the k best: k is a handful.
		i := len(hits)
		hits = append(hits, hit{})
		for i > 0 && hits[i-1].dot < dot {
			hits[i] = hits[i-1]
			i--
		}
		hits[i] = hit{int32(d), dot}
		if len(hits) > k {
			hits = hits[:k]
		}
	}
	out := make([]int32, len(hits))
	for i, h := range hits {
		out[i] = h.doc
	}
	return out
}

// cosine is the cosine of doc's vector and the unit vector qv: NaN when
// the doc has none or qv does not fit.
func (wv *wordVectors) cosine(doc int32, qv []float32) float64 {
	if wv == nil || len(qv) != wv.dim || int(doc) >= len(wv.ok) || !wv.ok[doc] {
		return math.NaN()
	}
	var s float64
	for i, x := range wv.vec[int(doc)*wv.dim : (int(doc)+1)*wv.dim] {
		s += float64(x) * float64(qv[i])
	}
	// The stored vector was unit before quantisation; so is qv.
	return s / 127
}

// dotInt8 is the dot product of row and q (len(q) >= len(row)). Four
// accumulators let the CPU overlap the multiplications; the leg's pass
// over a 100,000-table catalog is this loop.
func dotInt8(row []int8, q []int32) int32 {
	q = q[:len(row)]
	var s0, s1, s2, s3 int32
	i := 0
	for ; i+4 <= len(row); i += 4 {
		s0 += int32(row[i]) * q[i]
		s1 += int32(row[i+1]) * q[i+1]
		s2 += int32(row[i+2]) * q[i+2]
		s3 += int32(row[i+3]) * q[i+3]
	}
	for ; i < len(row); i++ {
		s0 += int32(row[i]) * q[i]
	}
	return s0 + s1 + s2 + s3
}

// reserveWordLeg keeps the best keep candidates of ranked (best first)
// except that the last places (wordLegSlots, or a tenth of keep when
// fewer) go to the word-vector leg's
// tables (word: their rank in that leg, 1 = nearest) that are not already
// among the others, nearest first; places the leg does not fill go to the
// next candidates by rank. The result keeps ranked's order.
func reserveWordLeg(ranked []*Candidate, keep int, word map[int64]int) []*Candidate {
	if len(ranked) <= keep || len(word) == 0 {
		return ranked[:min(keep, len(ranked)):min(keep, len(ranked))]
	}
	// A tenth of the places at most: a deployment that narrows C keeps
	// most of them for the legs that match words.
	slots := min(wordLegSlots, keep/10)
	if slots == 0 {
		return ranked[:keep:keep]
	}
	head := keep - slots
	var leg []*Candidate
	for _, c := range ranked[head:] {
		if word[c.Table.ID] > 0 {
			leg = append(leg, c)
		}
	}
	slices.SortStableFunc(leg, func(a, b *Candidate) int { return cmp.Compare(word[a.Table.ID], word[b.Table.ID]) })
	if len(leg) > slots {
		leg = leg[:slots]
	}
	in := map[*Candidate]bool{}
	for _, c := range leg {
		in[c] = true
	}
	for _, c := range ranked[head:] {
		if len(leg) == slots {
			break
		}
		if !in[c] {
			in[c] = true
			leg = append(leg, c)
		}
	}
	out := make([]*Candidate, 0, keep)
	out = append(out, ranked[:head]...)
	for _, c := range ranked[head:] {
		if in[c] {
			out = append(out, c)
		}
	}
	return out
}
