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
	"bufio"
	"bytes"
	"compress/gzip"
	"embed"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
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

// rankDecay divides a WordNet weight by 1+rankDecay*r for a relation
// reached through a word's r-th most frequent sense (r = 0 for the first).
const rankDecay = 0.25

// relWeight gives the weight and Kind of a WordNet relation of the extract.
// The weights rank expansions below exact matches; they were chosen on
// held-out Spider-Syn training databases (gen -measure).
func relWeight(kind byte) (float64, string) {
	switch kind {
	case 's':
		return 0.6, KindSynonym
	case 'c':
		return 0.45, KindSynonym
	case 'd':
		return 0.5, KindDerivation
	case 'a':
		return 0.45, KindAttribute
	case 'h':
		return 0.35, KindHypernym
	case 'H':
		return 0.25, KindHypernym
	case 'o':
		return 0.3, KindHyponym
	}
	return 0, ""
}

// learnedWeight turns how often a question word replaced a schema word
// (n of the word's total substitutions) into a weight.
func learnedWeight(n, total int) float64 {
	w := 0.45 + 0.1*math.Log2(float64(n)) + 0.2*float64(n)/float64(total)
	return math.Min(w, 0.85)
}

// Part-of-speech bits of a lemma.
const (
	posNoun = 1 << iota
	posVerb
	posAdj
	posAdv
)

//go:embed data/morph.txt.gz data/wordnet.txt.gz data/abbrev.tsv data/learned.tsv
var embedded embed.FS

// entry is one precomputed expansion, 12 bytes instead of Expansion's 40:
// the WordNet extract has over half a million.
type entry struct {
	term   uint32 // index into Lexicon.terms
	kind   uint8  // index into kinds
	weight float32
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

type span struct{ lo, hi uint32 }

// lemmaInfo is what Lemma needs of a WordNet lemma: its parts of speech and
// how many senses it has.
type lemmaInfo struct {
	pos    uint8
	senses uint16
}

// Lexicon holds the loaded vocabulary. The zero value is not usable; get
// one from Default, Load or Parse.
type Lexicon struct {
	lemmas  map[string]lemmaInfo
	exc     [4]map[string]string
	terms   []string
	index   map[string]uint32 // term → index into terms
	entries []entry
	expand  map[string]span // lemma → its entries, sorted by weight
	abbrev  map[string]span
}

// Sources are the data files of a Lexicon. A nil reader leaves that part
// out: Morph nil means Lemma only lower-cases, WordNet, Learned or Abbrev nil
// mean no expansions of that kind.
type Sources struct {
	Morph   io.Reader // gzip: morph.txt.gz
	WordNet io.Reader // gzip: wordnet.txt.gz
	Learned io.Reader // learned.tsv
	Abbrev  io.Reader // abbrev.tsv
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
		Morph:   open("morph.txt.gz"),
		WordNet: open("wordnet.txt.gz"),
		Learned: open("learned.tsv"),
		Abbrev:  open("abbrev.tsv"),
	}
}

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

// Parse builds a Lexicon from src.
func Parse(src Sources) (*Lexicon, error) {
	l := &Lexicon{
		lemmas: map[string]lemmaInfo{},
		index:  map[string]uint32{},
		expand: map[string]span{},
		abbrev: map[string]span{},
	}
	for i := range l.exc {
		l.exc[i] = map[string]string{}
	}
	if src.Morph != nil {
		if err := readGzipLines(src.Morph, l.morphLine); err != nil {
			return nil, fmt.Errorf("vocab: morphology: %w", err)
		}
	}
	acc := map[string][]entry{}
	if src.WordNet != nil {
		if err := readGzipLines(src.WordNet, func(line string) error { return l.wordnetLine(line, acc) }); err != nil {
			return nil, fmt.Errorf("vocab: wordnet: %w", err)
		}
	}
	if src.Learned != nil {
		if err := readLines(src.Learned, func(line string) error { return l.learnedLine(line, acc) }); err != nil {
			return nil, fmt.Errorf("vocab: learned: %w", err)
		}
	}
	l.expand = l.pack(acc, MaxExpansions)
	acc = map[string][]entry{}
	if src.Abbrev != nil {
		if err := readLines(src.Abbrev, func(line string) error { return l.abbrevLine(line, acc) }); err != nil {
			return nil, fmt.Errorf("vocab: abbreviations: %w", err)
		}
	}
	l.abbrev = l.pack(acc, MaxExpansions)
	return l, nil
}

func readGzipLines(r io.Reader, fn func(string) error) error {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return err
	}
	defer zr.Close()
	return readLines(zr, fn)
}

func readLines(r io.Reader, fn func(string) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		if err := fn(line); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
	}
	return sc.Err()
}

func (l *Lexicon) morphLine(line string) error {
	f := strings.Fields(line)
	switch {
	case len(f) == 4 && f[0] == "L":
		m, err1 := strconv.Atoi(f[2])
		n, err2 := strconv.Atoi(f[3])
		if err1 != nil || err2 != nil {
			return fmt.Errorf("bad lemma line %q", line)
		}
		l.lemmas[f[1]] = lemmaInfo{pos: uint8(m), senses: uint16(min(n, math.MaxUint16))}
	case len(f) == 4 && f[0] == "X":
		p := strings.IndexByte("nvar", f[1][0])
		if p < 0 {
			return fmt.Errorf("bad part of speech %q", f[1])
		}
		if _, dup := l.exc[p][f[2]]; !dup { // the first listed base wins
			l.exc[p][f[2]] = f[3]
		}
	default:
		return fmt.Errorf("bad line %q", line)
	}
	return nil
}

func (l *Lexicon) termID(t string) uint32 {
	if id, ok := l.index[t]; ok {
		return id
	}
	id := uint32(len(l.terms))
	l.terms = append(l.terms, t)
	l.index[t] = id
	return id
}

func (l *Lexicon) wordnetLine(line string, acc map[string][]entry) error {
	word, rest, ok := strings.Cut(line, "\t")
	if !ok {
		return fmt.Errorf("no tab in %q", line)
	}
	for _, r := range strings.Fields(rest) {
		k, tr, ok1 := strings.Cut(r, ":")
		term, rk, ok2 := strings.Cut(tr, ":")
		if !ok1 || !ok2 || len(k) != 1 {
			return fmt.Errorf("bad relation %q", r)
		}
		rank, err := strconv.Atoi(rk)
		if err != nil {
			return fmt.Errorf("bad rank in %q", r)
		}
		w, kind := relWeight(k[0])
		if kind == "" {
			return fmt.Errorf("unknown relation kind %q", k)
		}
		w /= 1 + rankDecay*float64(rank)
		acc[word] = append(acc[word], entry{term: l.termID(term), kind: kindIndex(kind), weight: float32(w)})
	}
	return nil
}

func (l *Lexicon) learnedLine(line string, acc map[string][]entry) error {
	f := strings.Split(line, "\t")
	if len(f) != 4 {
		return fmt.Errorf("want 4 fields in %q", line)
	}
	n, err1 := strconv.Atoi(f[2])
	total, err2 := strconv.Atoi(f[3])
	if err1 != nil || err2 != nil || n < 1 || total < n {
		return fmt.Errorf("bad counts in %q", line)
	}
	acc[f[0]] = append(acc[f[0]], entry{term: l.termID(f[1]), kind: kindIndex(KindLearned), weight: float32(learnedWeight(n, total))})
	return nil
}

func (l *Lexicon) abbrevLine(line string, acc map[string][]entry) error {
	f := strings.Split(line, "\t")
	if len(f) != 3 {
		return fmt.Errorf("want 3 fields in %q", line)
	}
	w, err := strconv.ParseFloat(f[2], 64)
	if err != nil || w <= 0 || w >= 1 {
		return fmt.Errorf("bad weight in %q", line)
	}
	acc[f[0]] = append(acc[f[0]], entry{term: l.termID(f[1]), kind: kindIndex(KindAbbreviation), weight: float32(w)})
	return nil
}

// pack keeps, per word, the best entry of each term, sorts them by weight
// (then term, for determinism), cuts at max and lays them out flat.
func (l *Lexicon) pack(acc map[string][]entry, max int) map[string]span {
	words := make([]string, 0, len(acc))
	for w := range acc {
		words = append(words, w)
	}
	sort.Strings(words)
	out := make(map[string]span, len(words))
	for _, w := range words {
		es := acc[w]
		sort.SliceStable(es, func(i, j int) bool {
			if es[i].weight != es[j].weight {
				return es[i].weight > es[j].weight
			}
			return l.terms[es[i].term] < l.terms[es[j].term]
		})
		lo := uint32(len(l.entries))
		seen := make(map[uint32]bool, len(es))
		for _, e := range es {
			if seen[e.term] || l.terms[e.term] == w {
				continue
			}
			seen[e.term] = true
			l.entries = append(l.entries, e)
			if int(uint32(len(l.entries))-lo) == max {
				break
			}
		}
		out[w] = span{lo, uint32(len(l.entries))}
	}
	return out
}

// Expand returns what a question word may stand for in a schema: WordNet
// synonyms, hypernyms, hyponyms, derivations and attributes of its base form,
// and learned associations, at most MaxExpansions, by decreasing weight. The
// word itself and its base form are never listed. word should be lower case.
// The returned slice is the caller's.
func (l *Lexicon) Expand(word string) []Expansion {
	base := l.Lemma(word)
	s, ok := l.expand[base]
	if !ok {
		return nil
	}
	return l.expansions(s, word)
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
	return l.expansions(s, token)
}

func (l *Lexicon) expansions(s span, skip string) []Expansion {
	out := make([]Expansion, 0, s.hi-s.lo)
	for _, e := range l.entries[s.lo:s.hi] {
		t := l.terms[e.term]
		if t == skip {
			continue
		}
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
	if len(l.lemmas) == 0 || Stop(w) {
		return w
	}
	if info, ok := l.lemmas[w]; ok {
		return l.preferBase(w, info)
	}
	for _, exc := range l.exc {
		if b, ok := exc[w]; ok {
			return b
		}
	}
	for _, r := range detachRules {
		if cand, ok := r.apply(w); ok && l.lemmas[cand].pos&r.pos != 0 {
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

// preferBase returns the base of a word that is a lemma of its own when
// the base serves retrieval better: the singular of a plural noun with
// fewer senses (days → day) and the verb of a participle that is no noun
// (registered → register).
func (l *Lexicon) preferBase(w string, info lemmaInfo) string {
	for _, r := range detachRules {
		cand, ok := r.apply(w)
		if !ok {
			continue
		}
		c, ok := l.lemmas[cand]
		if !ok {
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
