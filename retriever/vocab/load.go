package vocab

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
)

// Loading is on the start-up path of every process that retrieves, so it
// avoids per-line allocations: the WordNet extract has half a million
// relations. Each word's expansions are laid out, sorted, de-duplicated and
// cut to MaxExpansions in place in one flat slice.

// parser is the state of one Parse.
type parser struct {
	l       *Lexicon
	index   map[string]uint32  // term → index into l.terms
	pending map[string][]entry // learned entries not yet merged into a word
}

// Parse builds a Lexicon from src.
func Parse(src Sources) (*Lexicon, error) {
	l := &Lexicon{words: make(map[string]wordInfo, 1<<17), abbrev: map[string]span{}, w: DefaultWeights()}
	if src.Weights != nil {
		l.w = *src.Weights
	}
	for i := range l.exc {
		l.exc[i] = map[string]string{}
	}
	p := &parser{l: l, index: make(map[string]uint32, 1<<16), pending: map[string][]entry{}}
	if src.Morph != nil {
		if err := readGzipLines(src.Morph, p.morphLine); err != nil {
			return nil, fmt.Errorf("vocab: morphology: %w", err)
		}
	}
	if src.Learned != nil {
		if err := readLines(src.Learned, p.learnedLine); err != nil {
			return nil, fmt.Errorf("vocab: learned: %w", err)
		}
	}
	if src.WordNet != nil {
		l.entries = make([]entry, 0, 1<<19)
		if err := readGzipLines(src.WordNet, p.wordnetLine); err != nil {
			return nil, fmt.Errorf("vocab: wordnet: %w", err)
		}
	}
	// Learned words WordNet relates to nothing, in a fixed order.
	for _, w := range sortedKeys(p.pending) {
		lo := len(l.entries)
		l.entries = append(l.entries, p.pending[w]...)
		info := l.words[w]
		info.span = p.finish(w, lo)
		l.words[w] = info
	}
	p.pending = map[string][]entry{}
	if src.Abbrev != nil {
		if err := readLines(src.Abbrev, p.abbrevLine); err != nil {
			return nil, fmt.Errorf("vocab: abbreviations: %w", err)
		}
	}
	for _, w := range sortedKeys(p.pending) {
		lo := len(l.entries)
		l.entries = append(l.entries, p.pending[w]...)
		l.abbrev[w] = p.finish(w, lo)
	}
	l.entries = slices.Clip(l.entries)
	if src.Embeddings != nil {
		e, err := ParseEmbeddings(src.Embeddings)
		if err != nil {
			return nil, err
		}
		l.emb = e
	}
	return l, nil
}

func sortedKeys(m map[string][]entry) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// finish sorts the entries of word from lo on by decreasing weight (then
// term, so the order is fixed), keeps the best of each term, drops the word
// itself, cuts at MaxExpansions and returns their span.
func (p *parser) finish(word string, lo int) span {
	l := p.l
	es := l.entries[lo:]
	slices.SortFunc(es, func(a, b entry) int {
		if c := cmp.Compare(b.weight, a.weight); c != 0 {
			return c
		}
		return cmp.Compare(l.terms[a.term], l.terms[b.term])
	})
	n := 0
	for _, e := range es {
		if n == MaxExpansions {
			break
		}
		// An inflected-only learned pair and another relation to the
		// same term are both kept: the base form still has the other.
		if l.terms[e.term] == word || slices.ContainsFunc(es[:n], func(k entry) bool { return k.term == e.term && k.inflected == e.inflected }) {
			continue
		}
		es[n] = e
		n++
	}
	l.entries = l.entries[:lo+n]
	return span{uint32(lo), uint32(lo + n)}
}

func readGzipLines(r io.Reader, fn func([]byte) error) error {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return err
	}
	defer zr.Close()
	return readLines(zr, fn)
}

// readLines calls fn with each line that is not empty or a # comment; the
// line is valid only during the call.
func readLines(r io.Reader, fn func([]byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Bytes()
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		if err := fn(line); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
	}
	return sc.Err()
}

// field cuts the next sep-separated field off line.
func field(line []byte, sep byte) (f, rest []byte) {
	if i := bytes.IndexByte(line, sep); i >= 0 {
		return line[:i], line[i+1:]
	}
	return line, nil
}

func atoi(b []byte) (int, error) { return strconv.Atoi(string(b)) }

var errSyntax = errors.New("syntax error")

// morphLine reads "L lemma mask senses" or "X pos inflected base".
func (p *parser) morphLine(line []byte) error {
	tag, rest := field(line, ' ')
	switch string(tag) {
	case "L":
		w, rest := field(rest, ' ')
		m, rest := field(rest, ' ')
		mask, err1 := atoi(m)
		senses, err2 := atoi(rest)
		if err1 != nil || err2 != nil || len(w) == 0 || mask <= 0 || mask > 15 {
			return fmt.Errorf("%w in %q", errSyntax, line)
		}
		p.l.words[string(w)] = wordInfo{pos: uint8(mask), senses: uint16(min(senses, math.MaxUint16))}
		p.l.nlemmas++
	case "X":
		pos, rest := field(rest, ' ')
		infl, base := field(rest, ' ')
		i := bytes.IndexByte([]byte("nvar"), pos[0])
		if len(pos) != 1 || i < 0 || len(infl) == 0 || len(base) == 0 {
			return fmt.Errorf("%w in %q", errSyntax, line)
		}
		if _, dup := p.l.exc[i][string(infl)]; !dup { // the first listed base wins
			p.l.exc[i][string(infl)] = string(base)
		}
	default:
		return fmt.Errorf("%w in %q", errSyntax, line)
	}
	return nil
}

func (p *parser) termID(t []byte) uint32 {
	if id, ok := p.index[string(t)]; ok {
		return id
	}
	id := uint32(len(p.l.terms))
	s := string(t)
	p.l.terms = append(p.l.terms, s)
	p.index[s] = id
	return id
}

// wordnetLine reads "word<TAB>kind:term:rank ..." and lays out the word's
// expansions, merged with its learned ones.
func (p *parser) wordnetLine(line []byte) error {
	word, rest := field(line, '\t')
	if rest == nil || len(word) == 0 {
		return fmt.Errorf("%w in %q", errSyntax, line)
	}
	l := p.l
	lo := len(l.entries)
	for len(rest) > 0 {
		var r []byte
		r, rest = field(rest, ' ')
		k, tr := field(r, ':')
		term, rk := field(tr, ':')
		if len(k) != 1 || len(term) == 0 || len(rk) != 1 || rk[0] < '0' || rk[0] > '9' {
			return fmt.Errorf("%w in relation %q", errSyntax, r)
		}
		w, kind := l.w.relation(k[0])
		if kind == "" {
			return fmt.Errorf("unknown relation kind %q", k)
		}
		w /= 1 + l.w.RankDecay*float64(rk[0]-'0')
		if w > 0 {
			l.entries = append(l.entries, entry{term: p.termID(term), kind: kindIndex(kind), weight: float32(w)})
		}
	}
	ws := string(word)
	if pend, ok := p.pending[ws]; ok {
		l.entries = append(l.entries, pend...)
		delete(p.pending, ws)
	}
	info := l.words[ws]
	info.span = p.finish(ws, lo)
	l.words[ws] = info
	return nil
}

// learnedLine reads "word<TAB>term<TAB>times<TAB>total[<TAB>inflected]".
func (p *parser) learnedLine(line []byte) error {
	word, rest := field(line, '\t')
	term, rest := field(rest, '\t')
	nb, rest := field(rest, '\t')
	tb, flag := field(rest, '\t')
	n, err1 := atoi(nb)
	total, err2 := atoi(tb)
	if err1 != nil || err2 != nil || n < 1 || total < n || len(word) == 0 || len(term) == 0 ||
		(flag != nil && string(flag) != "inflected") {
		return fmt.Errorf("%w in %q", errSyntax, line)
	}
	w := p.l.w.learned(n, total)
	if w <= 0 {
		return nil
	}
	ws := string(word)
	p.pending[ws] = append(p.pending[ws], entry{term: p.termID(term), kind: kindIndex(KindLearned), inflected: flag != nil, weight: float32(w)})
	return nil
}

// abbrevLine reads "abbreviation<TAB>word<TAB>weight".
func (p *parser) abbrevLine(line []byte) error {
	abbr, rest := field(line, '\t')
	word, wb := field(rest, '\t')
	w, err := strconv.ParseFloat(string(wb), 64)
	if err != nil || w <= 0 || w >= 1 || len(abbr) == 0 || len(word) == 0 {
		return fmt.Errorf("%w in %q", errSyntax, line)
	}
	w *= p.l.w.Abbreviation
	if w <= 0 {
		return nil
	}
	as := string(abbr)
	p.pending[as] = append(p.pending[as], entry{term: p.termID(word), kind: kindIndex(KindAbbreviation), weight: float32(min(w, 0.99))})
	return nil
}
