package catalog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/atriumdb/atrium/internal/ident"
)

// Embedder turns texts into vectors. The catalog stores the Name and
// Dimension of the embedder that produced its vectors in
// atrium.catalog_state; whoever queries the catalog must embed questions with
// an embedder of the same name and dimension. Implementations must be safe
// for concurrent use.
type Embedder interface {
	// Name identifies the embedder and its model, e.g. "builtin-v1" or
	// "onnx:all-MiniLM-L6-v2"; a change of name re-embeds the catalog.
	Name() string
	// Dimension is the length of every vector Embed returns.
	Dimension() int
	// Embed returns one vector per text, in order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// EmbedderConfig selects and configures an embedder for NewEmbedder.
type EmbedderConfig struct {
	// Kind is builtin (default), onnx or openai.
	Kind string
	// Dimension of the builtin embedder (default 256); for openai, when set,
	// it is sent as "dimensions" and checked against the reply.
	Dimension int

	// ModelPath is the ONNX sentence-embedding model (onnx).
	ModelPath string
	// TokenizerPath is the Hugging Face tokenizer.json of the model (onnx).
	TokenizerPath string
	// Device is cpu (default) or cuda (onnx); cuda falls back to CPU with a
	// logged reason when the CUDA provider cannot be used.
	Device string
	// RuntimeLib is the path of libonnxruntime.so (onnx); default
	// $ATRIUM_ONNXRUNTIME_LIB, then .deps/onnxruntime/lib/libonnxruntime.so.
	RuntimeLib string
	// MaxTokens caps the tokens per text (onnx, default 256).
	MaxTokens int
	// BatchSize is how many texts go into one model run or HTTP request
	// (default 32 for onnx, 128 for openai).
	BatchSize int

	// URL is the OpenAI-compatible base URL, e.g. http://host:8000/v1 (openai).
	URL string
	// Model is the model name sent to the endpoint (openai) and recorded
	// in the embedder name.
	Model string
	// APIKey is sent as a bearer token when set (openai).
	APIKey string
	// Timeout bounds one HTTP request (openai, default 60s).
	Timeout time.Duration
	// HTTPClient replaces http.DefaultClient's transport (openai).
	HTTPClient *http.Client

	// Logger receives warnings such as a CUDA fallback; nil discards.
	Logger *slog.Logger
}

// ErrUnknownEmbedder reports an EmbedderConfig.Kind NewEmbedder does not know.
var ErrUnknownEmbedder = errors.New("catalog: unknown embedder")

// NewEmbedder builds the embedder cfg selects. Embedders that hold native
// resources (onnx) implement io.Closer; callers should close them.
func NewEmbedder(cfg EmbedderConfig) (Embedder, error) {
	switch strings.ToLower(cfg.Kind) {
	case "", "builtin":
		return NewBuiltinEmbedder(cfg.Dimension), nil
	case "onnx":
		e, err := NewONNXEmbedder(cfg)
		if err != nil {
			return nil, err
		}
		return e, nil
	case "openai":
		e, err := NewOpenAIEmbedder(cfg)
		if err != nil {
			return nil, err
		}
		return e, nil
	default:
		return nil, fmt.Errorf("%w %q (want builtin, onnx or openai)", ErrUnknownEmbedder, cfg.Kind)
	}
}

// BuiltinEmbedder is a deterministic feature-hashing embedder that needs no
// model, so the catalog and retrieval work offline. Its text→vector function
// is part of Atrium's contract (vectors stored by one version must match
// questions embedded by another) and is versioned by Name:
//
//  1. The text is split into words with ident.Split (so camelCase,
//     snake_case and digits separate words; letters are lower-cased).
//  2. Each word w contributes weight 1 to feature "w:"+stem(w), where stem
//     removes a plural ending (ies→y, sses→ss, s→"" when the word is longer
//     than 3 and does not end in ss/us/is).
//  3. Each character trigram of "<"+w+">" contributes weight 0.25 to
//     feature "c:"+trigram (words of one rune contribute no trigrams).
//  4. A feature f goes to index h%dim with sign + when bit 63 of h is 0 and
//     − otherwise, where h is the 64-bit FNV-1a hash of f's UTF-8 bytes.
//  5. The vector is L2-normalised (all zeros stays all zeros).
type BuiltinEmbedder struct {
	dim int
}

// DefaultBuiltinDimension is the builtin embedder's dimension when none is set.
const DefaultBuiltinDimension = 256

// NewBuiltinEmbedder returns the builtin embedder with dimension dim (≤ 0
// means DefaultBuiltinDimension).
func NewBuiltinEmbedder(dim int) *BuiltinEmbedder {
	if dim <= 0 {
		dim = DefaultBuiltinDimension
	}
	return &BuiltinEmbedder{dim: dim}
}

// Name implements Embedder.
func (b *BuiltinEmbedder) Name() string { return "builtin-v1" }

// Dimension implements Embedder.
func (b *BuiltinEmbedder) Dimension() int { return b.dim }

// Embed implements Embedder. It never fails except on a cancelled context.
func (b *BuiltinEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		out[i] = b.Vector(t)
	}
	return out, nil
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnvString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return h
}

// Feature hash prefixes, precomputed: hashing "w:"+x equals continuing
// these with x.
var (
	wordSeed = fnvString(fnvOffset, "w:")
	gramSeed = fnvString(fnvOffset, "c:")
)

// Vector embeds one text (see BuiltinEmbedder for the function).
func (b *BuiltinEmbedder) Vector(text string) []float32 {
	v := make([]float32, b.dim)
	dim := uint64(b.dim)
	add := func(h uint64, w float32) {
		if h>>63 != 0 {
			w = -w
		}
		v[h%dim] += w
	}
	var buf []byte
	for _, w := range ident.Split(text) {
		add(fnvString(wordSeed, stem(w)), 1)
		if utf8.RuneCountInString(w) < 2 {
			continue
		}
		// Trigrams over "<w>", by runes so that non-ASCII words work:
		// p0..p3 are the byte offsets of four consecutive rune starts.
		buf = append(append(append(buf[:0], '<'), w...), '>')
		p0, p1, p2 := 0, 1, 1+runeLen(buf[1:])
		for p2 < len(buf) {
			p3 := p2 + runeLen(buf[p2:])
			add(fnvBytes(gramSeed, buf[p0:p3]), 0.25)
			p0, p1, p2 = p1, p2, p3
		}
	}
	normalize(v)
	return v
}

func runeLen(b []byte) int {
	_, n := utf8.DecodeRune(b)
	return n
}

func fnvBytes(h uint64, b []byte) uint64 {
	for _, c := range b {
		h ^= uint64(c)
		h *= fnvPrime
	}
	return h
}

// stem removes an English plural ending; see BuiltinEmbedder.
func stem(w string) string {
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"):
		return w[:len(w)-2]
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") &&
		!strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		last, _ := utf8.DecodeLastRuneInString(w[:len(w)-1])
		if unicode.IsLetter(last) {
			return w[:len(w)-1]
		}
	}
	return w
}

func normalize(v []float32) {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
}

// Cosine is the cosine similarity of a and b (0 when either is all zeros or
// their lengths differ).
func Cosine(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}
