// Package vocab bridges the words of questions and the words of schemas:
// WordNet base forms and relations ("vocalists" → vocalist → singer),
// associations learned from Spider-Syn training questions, and the
// abbreviations identifiers use (cust → customer, qty → quantity).
//
// Everything is read from data files embedded in the binary, produced by
//
//	go run ./retriever/vocab/gen
//
// from WordNet 3.0 (Debian package wordnet-base, /usr/share/wordnet) and the
// Spider / Spider-Syn training sets (never a dev set); see gen's doc comment
// and docs/retrieval.md. A Lexicon is immutable after loading and safe for
// concurrent use.
package vocab

//go:generate go run ./gen -out data

import (
	"bytes"
	"embed"
	"io"
	"math"
	"slices"
	"strings"
	"sync"
)

// Kinds of Expansion.
const (
	KindSynonym      = "synonym"      // same WordNet synset (or the head of a multi-word synonym)
	KindHypernym     = "hypernym"     // one or two levels more general (musician for singer)
	KindHyponym      = "hyponym"      // one level more specific (buyer for customer)
	KindDerivation   = "derivation"   // derivationally related form or pertainym (enroll for enrollment)
	KindAttribute    = "attribute"    // the noun an adjective is a value of (age for old)
	KindLearned      = "learned"      // learned from Spider-Syn training questions
	KindAbbreviation = "abbreviation" // identifier abbreviation (cust → customer)
)

// MaxExpansions bounds the list Expand returns.
const MaxExpansions = 20

// Expansion is one word a question word or identifier token may stand for.
type Expansion struct {
	Term   string  // lower-case base form (compare with Lemma of the schema word)
	Weight float64 // in (0,1); an exact match counts 1 and is never listed
	Kind   string  // one of the Kind constants
}

// Weights set how much each kind of expansion counts, an exact match
// counting 1. DefaultWeights are the shipped values; other values serve
// experiments (gen -measure).
type Weights struct {
	Synonym    float64 // same synset
	Compound   float64 // head of a multi-word synonym (course_of_study → course)
	Derivation float64 // derivationally related form, pertainym, participle
	Attribute  float64 // adjective ↔ the noun it is a value of
	Hypernym   float64 // one level up
	Hypernym2  float64 // two levels up
	Hyponym    float64 // one level down
	// RankDecay divides a WordNet weight by 1+RankDecay*r for a relation
	// reached through a word's r-th most frequent sense (r = 0 the first).
	RankDecay float64
	// A learned pair seen n times, of the question word's total
	// substitutions, weighs LearnedBase + LearnedLog*log2(n) +
	// LearnedShare*n/total, at most LearnedMax.
	LearnedBase, LearnedLog, LearnedShare, LearnedMax float64
	// Abbreviation scales the weights of abbrev.tsv.
	Abbreviation float64
}

// DefaultWeights returns the shipped weights, chosen on held-out Spider-Syn
// training databases (gen -measure), never on a dev set.
func DefaultWeights() Weights {
	return Weights{
		Synonym: 0.6, Compound: 0.45, Derivation: 0.5, Attribute: 0.45,
		Hypernym: 0.35, Hypernym2: 0.25, Hyponym: 0.3, RankDecay: 0.25,
		LearnedBase: 0.45, LearnedLog: 0.1, LearnedShare: 0.2, LearnedMax: 0.85,
		Abbreviation: 1,
	}
}

// relation gives the weight and Kind of a WordNet relation of the extract.
func (w *Weights) relation(kind byte) (float64, string) {
	switch kind {
	case 's':
		return w.Synonym, KindSynonym
	case 'c':
		return w.Compound, KindSynonym
	case 'd':
		return w.Derivation, KindDerivation
	case 'a':
		return w.Attribute, KindAttribute
	case 'h':
		return w.Hypernym, KindHypernym
	case 'H':
		return w.Hypernym2, KindHypernym
	case 'o':
		return w.Hyponym, KindHyponym
	}
	return 0, ""
}

func (w *Weights) learned(n, total int) float64 {
	v := w.LearnedBase + w.LearnedLog*math.Log2(float64(n)) + w.LearnedShare*float64(n)/float64(total)
	return math.Min(v, w.LearnedMax)
}

// Part-of-speech bits of a lemma.
const (
	posNoun = 1 << iota
	posVerb
	posAdj
	posAdv
)

//go:embed data/morph.txt.gz data/wordnet.txt.gz data/abbrev.tsv data/learned.tsv data/embed.bin.gz
var embedded embed.FS

// entry is one precomputed expansion, 12 bytes instead of Expansion's 40:
// the WordNet extract has over half a million.
type entry struct {
	term uint32 // index into Lexicon.terms
	kind uint8  // index into kinds
	// inflected: a learned pair mined only from inflected forms of the
	// word, which does not apply to the word's base form (mine.Pair).
	inflected bool
	weight    float32
}

var kinds = [...]string{KindSynonym, KindHypernym, KindHyponym, KindDerivation, KindAttribute, KindLearned, KindAbbreviation}

func kindIndex(k string) uint8 {
	for i, s := range kinds {
		if s == k {
			return uint8(i)
		}
	}
	panic("vocab: unknown kind " + k)
}

// span locates a word's expansions in Lexicon.entries.
type span struct{ lo, hi uint32 }

// wordInfo is what the Lexicon knows of a word: its WordNet parts of speech
// (0 when it is no WordNet lemma) and senses, and its expansions.
type wordInfo struct {
	span
	senses uint16
	pos    uint8
}

// Lexicon holds the loaded vocabulary. The zero value is not usable; get
// one from Default, Load or Parse.
type Lexicon struct {
	words   map[string]wordInfo
	exc     [4]map[string]string // per part of speech: inflected → base
	terms   []string
	entries []entry         // per word, sorted by decreasing weight
	abbrev  map[string]span // identifier token → its entries
	nlemmas int
	w       Weights
	emb     *Embeddings
	guess   guessIndex // built on the first GuessAbbreviation
}

// Sources are the data files of a Lexicon. A nil reader leaves that part
// out: Morph nil means Lemma only lower-cases, WordNet, Learned or Abbrev nil
// mean no expansions of that kind.
type Sources struct {
	Morph   io.Reader // gzip: morph.txt.gz
	WordNet io.Reader // gzip: wordnet.txt.gz
	Learned io.Reader // learned.tsv
	Abbrev  io.Reader // abbrev.tsv
	// Embeddings nil means no word vectors (Lexicon.Embeddings is nil).
	Embeddings io.Reader // gzip: embed.bin.gz
	// Weights nil means DefaultWeights.
	Weights *Weights
}

// EmbeddedSources opens the data files compiled into the binary.
func EmbeddedSources() Sources {
	open := func(name string) io.Reader {
		b, err := embedded.ReadFile("data/" + name)
		if err != nil {
			panic("vocab: missing embedded " + name) // embed guarantees it
		}
		return bytes.NewReader(b)
	}
	return Sources{
		Morph:      open("morph.txt.gz"),
		WordNet:    open("wordnet.txt.gz"),
		Learned:    open("learned.tsv"),
		Abbrev:     open("abbrev.tsv"),
		Embeddings: open("embed.bin.gz"),
	}
}

// Embeddings returns the word vectors, nil when the lexicon has none.
func (l *Lexicon) Embeddings() *Embeddings { return l.emb }

// Load parses the embedded data files.
func Load() (*Lexicon, error) { return Parse(EmbeddedSources()) }

// defaultLexicon loads the embedded data once, on first use.
var defaultLexicon = sync.OnceValues(Load)

// Default returns the Lexicon of the embedded data, loading it on the first
// call (about a tenth of a second) and sharing it afterwards. It panics only
// if the embedded data is corrupt, which TestEmbeddedLoads rules out.
func Default() *Lexicon {
	l, err := defaultLexicon()
	if err != nil {
		panic(err)
	}
	return l
}

// Expand returns what a question word may stand for in a schema: WordNet
// synonyms, hypernyms, hyponyms, derivations and attributes of its base form,
// and learned associations, at most MaxExpansions, by decreasing weight. The
// word itself and its base form are never listed. word should be lower case
// and as the question writes it: a learned pair mined only from an
// adjective's inflected forms ("goods") does not apply to its base form
// ("good"). The returned slice is the caller's.
func (l *Lexicon) Expand(word string) []Expansion {
	base := l.Lemma(word)
	info := l.words[base]
	if info.lo == info.hi {
		return nil
	}
	return l.expansions(info.span, word, base == word)
}

// ExpandIdentifier returns the full words an identifier token may abbreviate
// (cust → customer, qty → quantity), Kind KindAbbreviation, by decreasing
// weight; nil when the token is no known abbreviation. token is one
// lower-case piece of a split identifier (custCntry → cust, cntry).
func (l *Lexicon) ExpandIdentifier(token string) []Expansion {
	s, ok := l.abbrev[token]
	if !ok {
		return nil
	}
	return l.expansions(s, token, false)
}

// expansions lists a span's entries but skip; bare leaves out the learned
// pairs that apply only to inflected forms.
func (l *Lexicon) expansions(s span, skip string, bare bool) []Expansion {
	out := make([]Expansion, 0, s.hi-s.lo)
	// An inflected-only pair may share its term with another relation
	// (load.go keeps both); only then can a term repeat.
	inflected := false
	for _, e := range l.entries[s.lo:s.hi] {
		t := l.terms[e.term]
		if t == skip || (bare && e.inflected) ||
			(inflected && slices.ContainsFunc(out, func(x Expansion) bool { return x.Term == t })) {
			continue
		}
		inflected = inflected || e.inflected
		out = append(out, Expansion{Term: t, Weight: float64(e.weight), Kind: kinds[e.kind]})
	}
	return out
}

// Lemma returns the base form of a word the way WordNet's morphy finds it:
// the lower-cased word itself when it is a WordNet lemma; else the base an
// exception list gives (men → man, ran → run); else the first
// detachment rule, nouns then verbs then adjectives, that yields a lemma of
// that part of speech (singers → singer, enrolled → enroll, largest →
// large). Unlike morphy, a plural that is a lemma of its own but has fewer
// senses than its singular gives the singular (days → day, names → name;
// species stays), and a participle adjective its verb (registered →
// register). A word WordNet does not know keeps its form, except for a
// plain plural "s" or "ies" (tryouts → tryout). Stop words keep their form
// (morphy would make "does" a doe and "has" a ha).
func (l *Lexicon) Lemma(word string) string {
	w := strings.ToLower(word)
	if l.nlemmas == 0 || Stop(w) {
		return w
	}
	if info := l.words[w]; info.pos != 0 {
		return l.preferBase(w, info)
	}
	for _, exc := range l.exc {
		if b, ok := exc[w]; ok {
			return b
		}
	}
	for _, r := range detachRules {
		if cand, ok := r.apply(w); ok && l.words[cand].pos&r.pos != 0 {
			return cand
		}
	}
	n := len(w)
	switch {
	case n > 4 && strings.HasSuffix(w, "ies"):
		return w[:n-3] + "y"
	case n > 3 && w[n-1] == 's' && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		return w[:n-1]
	}
	return w
}

// Adjective reports whether WordNet lists w (lower case) as an adjective.
func (l *Lexicon) Adjective(w string) bool { return l.words[w].pos&posAdj != 0 }

// preferBase returns the base of a word that is a lemma of its own when
// the base serves retrieval better: the singular of a plural noun with
// fewer senses (days → day) and the verb of a participle that is no noun
// (registered → register).
func (l *Lexicon) preferBase(w string, info wordInfo) string {
	for _, r := range detachRules {
		cand, ok := r.apply(w)
		if !ok {
			continue
		}
		c := l.words[cand]
		if c.pos == 0 {
			continue
		}
		switch {
		case r.pos == posNoun && info.pos&posNoun != 0 && c.pos&posNoun != 0 && c.senses > info.senses:
			return cand
		case r.pos == posVerb && info.pos&posNoun == 0 && c.pos&posVerb != 0 &&
			(strings.HasSuffix(w, "ed") || strings.HasSuffix(w, "ing")):
			return cand
		}
	}
	return w
}

// detachRules are WordNet's morphy detachment rules (morph(7WN)), in
// morphy's order of parts of speech.
var detachRules = [...]detachRule{
	{posNoun, "s", ""}, {posNoun, "ses", "s"}, {posNoun, "xes", "x"}, {posNoun, "zes", "z"},
	{posNoun, "ches", "ch"}, {posNoun, "shes", "sh"}, {posNoun, "men", "man"}, {posNoun, "ies", "y"},
	{posVerb, "s", ""}, {posVerb, "ies", "y"}, {posVerb, "es", "e"}, {posVerb, "es", ""},
	{posVerb, "ed", "e"}, {posVerb, "ed", ""}, {posVerb, "ing", "e"}, {posVerb, "ing", ""},
	{posAdj, "er", ""}, {posAdj, "est", ""}, {posAdj, "er", "e"}, {posAdj, "est", "e"},
}

type detachRule struct {
	pos            uint8
	suffix, ending string
}

// apply replaces the rule's suffix of w by its ending; ok is false when w
// lacks the suffix or the result would be shorter than two letters.
func (r detachRule) apply(w string) (string, bool) {
	if !strings.HasSuffix(w, r.suffix) || len(w)-len(r.suffix)+len(r.ending) < 2 {
		return "", false
	}
	return w[:len(w)-len(r.suffix)] + r.ending, true
}
