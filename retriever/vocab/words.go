package vocab

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/atriumdb/atrium/catalog"
	"github.com/atriumdb/atrium/internal/ident"
)

// WordsEmbedderName is the name the words embedder records in the catalog.
// Its text→vector function (below) and the embedded data it reads (the
// GloVe vectors, the WordNet and morphology extracts behind Lemma and
// Segment) are part of the contract: a change to either must change the
// name, so that catalogs embedded by the old function are re-embedded.
const WordsEmbedderName = "words-v1"

// wordsShare is the word-vector part's share of the unit vector; 0.5 was
// fixed before any measurement (docs/retrieval.md, step 21) and is not a
// knob, since catalog and questions must agree on it.
const wordsShare = 0.5

// WordsEmbedder is the builtin embedder's hashed word and trigram features
// concatenated with a SIF-weighted mean of the text's GloVe word vectors.
// The hashed part alone puts a synonym as far from a word as any unrelated
// word ("campuses" from universities, "employees" from staff); the word
// vectors put such pairs at cosine 0.5–0.8, which lets the hybrid score's
// semantic leg find tables a user names in other words. It needs no model
// file, runs in-process, and is deterministic:
//
//  1. h is BuiltinEmbedder.Vector(text) (unit length, 256 dimensions).
//  2. For each word w of ident.Split(text) that is neither a stop word nor
//     document boilerplate (SQL type names, "table", "columns", "id"…):
//     the parts are w when GloVe has w, else Segment(w) when it splits
//     (folded identifiers: "firstname"), else Lemma(w). Each part p with a
//     vector adds a·unit(p)/(a + P(p)), where a = 1e-4 and P(p) is Zipf's
//     estimate 1/((rank(p)+1)·ln N) from p's frequency rank among the N
//     words (Arora et al.'s smooth inverse frequency: rare words weigh more).
//  3. g is that sum at unit length (all zeros stays all zeros).
//  4. The vector is ((1−s)·h, s·g) at unit length, s = 0.5.
type WordsEmbedder struct {
	hashed *catalog.BuiltinEmbedder
	lx     *Lexicon
	emb    *Embeddings
}

// NewWordsEmbedder returns the words embedder over lx (normally
// Default()), which must carry word vectors.
func NewWordsEmbedder(lx *Lexicon) (*WordsEmbedder, error) {
	if lx == nil || lx.Embeddings() == nil || lx.Embeddings().Len() < 2 {
		return nil, fmt.Errorf("vocab: the words embedder needs a lexicon with word vectors")
	}
	e := lx.Embeddings()
	return &WordsEmbedder{
		hashed: catalog.NewBuiltinEmbedder(0),
		lx:     lx,
		emb:    e,
	}, nil
}

// Name implements catalog.Embedder.
func (w *WordsEmbedder) Name() string { return WordsEmbedderName }

// Dimension implements catalog.Embedder.
func (w *WordsEmbedder) Dimension() int { return w.hashed.Dimension() + w.emb.Dim() }

// Embed implements catalog.Embedder. It never fails except on a cancelled
// context.
func (w *WordsEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		out[i] = w.Vector(t)
	}
	return out, nil
}

// Vector embeds one text (see WordsEmbedder for the function).
func (w *WordsEmbedder) Vector(text string) []float32 {
	h := w.hashed.Vector(text)
	g := make([]float32, w.emb.Dim())
	for _, word := range ident.Split(text) {
		if Stop(word) || docBoilerplate[word] {
			continue
		}
		one := [1]string{word}
		parts := one[:]
		if w.emb.Index(word) < 0 {
			if s := w.lx.Segment(word); len(s) > 0 {
				parts = s
			} else if l := w.lx.Lemma(word); l != "" {
				one[0] = l
			}
		}
		for _, p := range parts {
			idx := w.emb.Index(p)
			if idx < 0 {
				continue
			}
			w.emb.AddTo(g, idx, w.emb.SIFWeight(idx))
		}
	}
	v := make([]float32, 0, len(h)+len(g))
	for _, x := range h {
		v = append(v, x*(1-wordsShare))
	}
	if n := norm(g); n > 0 {
		s := float32(wordsShare / n)
		for _, x := range g {
			v = append(v, x*s)
		}
	} else {
		v = append(v, g...)
	}
	if n := norm(v); n > 0 {
		s := float32(1 / n)
		for k := range v {
			v[k] *= s
		}
	}
	return v
}

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

// docBoilerplate are words every catalog document carries (its template and
// SQL's type names): in the word-vector mean they would pull every
// document towards the same point.
var docBoilerplate = map[string]bool{
	"table": true, "columns": true, "column": true, "rows": true, "about": true,
	"primary": true, "key": true, "unique": true, "references": true, "integer": true, "int": true,
	"text": true, "varchar": true, "numeric": true, "bigint": true, "smallint": true, "real": true,
	"double": true, "precision": true, "boolean": true, "timestamp": true, "character": true,
	"varying": true, "more": true, "and": true, "id": true, "base": true, "view": true, "comment": true,
}

// Embedder kinds NewEmbedder knows besides catalog.NewEmbedder's.
const (
	// EmbedderWords is the words embedder (WordsEmbedder).
	EmbedderWords = "words"
)

// DefaultEmbedderKind is the embedder Atrium uses when none is configured:
// the one the shipped scorer (retriever/lite_weights.json) was trained
// with. Words-v1 finds more of a reworded question's tables with it (steps
// 25 and 26 of docs/retrieval.md; the weights list it under
// training.measured_with), but loses precision on renamed, documented
// schemas (step 30), so it is not the default.
const DefaultEmbedderKind = "builtin"

// EmbedderKinds lists the kinds NewEmbedder accepts, for usage messages.
const EmbedderKinds = "words, builtin, onnx or openai"

// NewDefaultEmbedder is NewEmbedder for DefaultEmbedderKind.
func NewDefaultEmbedder() (catalog.Embedder, error) {
	return NewEmbedder(catalog.EmbedderConfig{Kind: DefaultEmbedderKind})
}

// ResolveEmbedderKind is kind in lower case, DefaultEmbedderKind when
// empty, so that "no kind" means the default wherever it is read, whatever
// catalog.NewEmbedder takes "" for.
func ResolveEmbedderKind(kind string) string {
	if kind == "" {
		return DefaultEmbedderKind
	}
	return strings.ToLower(kind)
}

// CheckEmbedderKind reports an error wrapping catalog.ErrUnknownEmbedder
// when NewEmbedder does not know kind, so that a command can say so before
// it connects anywhere.
func CheckEmbedderKind(kind string) error {
	switch strings.ToLower(kind) {
	case "", EmbedderWords, "builtin", "onnx", "openai":
		return nil
	}
	return fmt.Errorf("%w %q (want %s)", catalog.ErrUnknownEmbedder, kind, EmbedderKinds)
}

// NewEmbedder builds the embedder cfg.Kind selects: words (WordsEmbedder
// over the embedded lexicon) or any kind catalog.NewEmbedder builds. The
// words embedder lives here rather than in catalog because its data does:
// catalog must not depend on the retriever's lexicon.
func NewEmbedder(cfg catalog.EmbedderConfig) (catalog.Embedder, error) {
	cfg.Kind = ResolveEmbedderKind(cfg.Kind)
	switch cfg.Kind {
	case EmbedderWords:
		e, err := NewWordsEmbedder(Default())
		if err != nil {
			return nil, err
		}
		if cfg.Dimension != 0 && cfg.Dimension != e.Dimension() {
			return nil, fmt.Errorf("vocab: the words embedder's dimension is fixed at %d (got %d)", e.Dimension(), cfg.Dimension)
		}
		return e, nil
	}
	if err := CheckEmbedderKind(cfg.Kind); err != nil {
		return nil, err
	}
	return catalog.NewEmbedder(cfg)
}
