package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// This file reads the WordNet 3.0 database files (Debian's wordnet-base puts
// them in /usr/share/wordnet; format in wndb(5WN)) and turns them into the
// two extracts the vocab package embeds: the morphology (lemmas and
// exception lists) and, per single-word lemma, its related single words.

// posInfo names one WordNet part of speech: its file suffix and the bit the
// vocab package uses for it in a lemma's part-of-speech mask.
type posInfo struct {
	file string
	tag  byte // the ss_type letter in data files: n, v, a (s: satellite), r
	bit  int
}

var wnPOS = []posInfo{
	{"noun", 'n', 1},
	{"verb", 'v', 2},
	{"adj", 'a', 4},
	{"adv", 'r', 8},
}

// synset is one parsed line of a data.* file.
type synset struct {
	words []string // lower case, adjective markers removed, "_" for spaces
	ptrs  []pointer
}

// pointer is one pointer of a synset; src and dst are 1-based word numbers
// for lexical pointers and 0 for semantic ones (between whole synsets).
type pointer struct {
	sym      string
	target   string // "<pos letter><offset>", the key of the target synset
	src, dst int
}

// wordnet holds what the generator needs of the database.
type wordnet struct {
	synsets map[string]*synset        // key: pos letter + offset
	senses  map[string][]string       // lemma → synset keys, all parts of speech, by sense rank within each
	ranks   map[string]map[string]int // lemma → synset key → sense rank (0 = most frequent)
	posMask map[string]int            // single-word lemma → part-of-speech bits
	nsenses map[string]int            // single-word lemma → synsets over all parts of speech
	exc     [][3]string               // pos file, inflected form, base form
}

// synKey is the map key of a synset; adjective satellites live in data.adj
// with the same offsets, so 's' folds into 'a'.
func synKey(pos byte, off string) string {
	if pos == 's' {
		pos = 'a'
	}
	return string(pos) + off
}

func readWordNet(dir string) (*wordnet, error) {
	wn := &wordnet{
		synsets: map[string]*synset{},
		senses:  map[string][]string{},
		ranks:   map[string]map[string]int{},
		posMask: map[string]int{},
		nsenses: map[string]int{},
	}
	for _, p := range wnPOS {
		if err := wn.readData(filepath.Join(dir, "data."+p.file), p); err != nil {
			return nil, err
		}
		if err := wn.readIndex(filepath.Join(dir, "index."+p.file), p); err != nil {
			return nil, err
		}
		if err := wn.readExc(filepath.Join(dir, p.file+".exc"), p); err != nil {
			return nil, err
		}
	}
	return wn, nil
}

func eachLine(path string, fn func(line string) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open wordnet file: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if strings.HasPrefix(line, "  ") { // licence header
			continue
		}
		if err := fn(line); err != nil {
			return fmt.Errorf("%s:%d: %w", path, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	return nil
}

// cleanWord lower-cases a WordNet word and drops an adjective position
// marker such as "(a)" or "(ip)".
func cleanWord(w string) string {
	if i := strings.IndexByte(w, '('); i > 0 {
		w = w[:i]
	}
	return strings.ToLower(w)
}

func (wn *wordnet) readData(path string, p posInfo) error {
	return eachLine(path, func(line string) error {
		if i := strings.Index(line, " | "); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) < 4 {
			return fmt.Errorf("short data line")
		}
		off, ssType := f[0], f[2][0]
		wcnt, err := strconv.ParseInt(f[3], 16, 32)
		if err != nil {
			return fmt.Errorf("word count: %w", err)
		}
		i := 4
		s := &synset{}
		for j := 0; j < int(wcnt); j++ {
			s.words = append(s.words, cleanWord(f[i]))
			i += 2
		}
		pcnt, err := strconv.Atoi(f[i])
		if err != nil {
			return fmt.Errorf("pointer count: %w", err)
		}
		i++
		for j := 0; j < pcnt; j++ {
			sym, toff, tpos, st := f[i], f[i+1], f[i+2][0], f[i+3]
			i += 4
			src, _ := strconv.ParseInt(st[:2], 16, 32)
			dst, _ := strconv.ParseInt(st[2:], 16, 32)
			s.ptrs = append(s.ptrs, pointer{sym: sym, target: synKey(tpos, toff), src: int(src), dst: int(dst)})
		}
		wn.synsets[synKey(ssType, off)] = s
		return nil
	})
}

func (wn *wordnet) readIndex(path string, p posInfo) error {
	return eachLine(path, func(line string) error {
		f := strings.Fields(line)
		if len(f) < 6 {
			return fmt.Errorf("short index line")
		}
		lemma := strings.ToLower(f[0])
		scnt, _ := strconv.Atoi(f[2])
		offs := f[len(f)-scnt:]
		if !strings.Contains(lemma, "_") && isPlainWord(lemma) {
			wn.posMask[lemma] |= p.bit
			wn.nsenses[lemma] += scnt
		}
		r := wn.ranks[lemma]
		if r == nil {
			r = map[string]int{}
			wn.ranks[lemma] = r
		}
		for rank, off := range offs {
			k := synKey(p.tag, off)
			if _, dup := r[k]; !dup {
				r[k] = rank
				wn.senses[lemma] = append(wn.senses[lemma], k)
			}
		}
		return nil
	})
}

func (wn *wordnet) readExc(path string, p posInfo) error {
	return eachLine(path, func(line string) error {
		f := strings.Fields(line)
		if len(f) < 2 || !isPlainWord(f[0]) {
			return nil
		}
		for _, base := range f[1:] {
			if isPlainWord(base) && base != f[0] {
				wn.exc = append(wn.exc, [3]string{p.file, f[0], base})
			}
		}
		return nil
	})
}

// isPlainWord reports whether w is one lower-case ASCII word: the only kind
// of token a tokenizer of questions or identifiers produces.
func isPlainWord(w string) bool {
	if w == "" {
		return false
	}
	for i := 0; i < len(w); i++ {
		if c := w[i]; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// compoundHead returns the word a multi-word lemma is about: X in
// "X_of_Y" ("course_of_study" → course), otherwise the last word
// ("credit_card" → card). It returns "" when the head is not a plain word.
func compoundHead(lemma string) string {
	parts := strings.Split(lemma, "_")
	head := parts[len(parts)-1]
	for i, p := range parts {
		if p == "of" && i > 0 {
			head = parts[0]
			break
		}
	}
	if !isPlainWord(head) || len(head) < 3 {
		return ""
	}
	return head
}

// Relation kinds in wordnet.txt; the vocab package maps each to a Kind and a
// weight.
const (
	relSynonym   = 's'
	relCompound  = 'c' // head word of a multi-word synonym
	relHypernym  = 'h'
	relHypernym2 = 'H'
	relHyponym   = 'o'
	relDeriv     = 'd'
	relAttribute = 'a'
)

// Per-kind caps keep the file small and the hyponym fan-out of general
// nouns ("person" has hundreds) from drowning the useful relations.
var relCap = map[byte]int{
	relSynonym: 16, relCompound: 6, relHypernym: 8, relHypernym2: 8,
	relHyponym: 8, relDeriv: 10, relAttribute: 4,
}

// maxRank is the last sense rank a word's relations are taken from: a
// word's rare senses ("singer" as Isaac Bashevis Singer) add mostly noise.
const maxRank = 5

type rel struct {
	kind byte
	term string
	rank int
}

// relations lists the related single words of lemma, in a deterministic
// order: by sense rank, then by the order of the database.
func (wn *wordnet) relations(lemma string) []rel {
	var out []rel
	seen := map[string]bool{lemma: true}
	count := map[byte]int{}
	add := func(kind byte, term string, rank int) {
		if !isPlainWord(term) || seen[kind2(kind)+term] || count[kind] >= relCap[kind] || term == lemma {
			return
		}
		seen[kind2(kind)+term] = true
		count[kind]++
		out = append(out, rel{kind, term, rank})
	}
	ranks := wn.ranks[lemma]
	for _, k := range wn.senses[lemma] {
		rank := ranks[k]
		if rank > maxRank {
			continue
		}
		s := wn.synsets[k]
		if s == nil {
			continue
		}
		self := 0 // 1-based number of lemma in the synset
		for i, w := range s.words {
			if w == lemma {
				self = i + 1
			}
		}
		for _, w := range s.words {
			if strings.Contains(w, "_") {
				if h := compoundHead(w); h != "" {
					add(relCompound, h, rank)
				}
				continue
			}
			add(relSynonym, w, rank)
		}
		for _, p := range s.ptrs {
			t := wn.synsets[p.target]
			if t == nil {
				continue
			}
			switch p.sym {
			case "@", "@i":
				for _, w := range t.words {
					add(relHypernym, w, rank)
				}
				for _, p2 := range t.ptrs {
					if p2.sym != "@" && p2.sym != "@i" {
						continue
					}
					if t2 := wn.synsets[p2.target]; t2 != nil {
						for _, w := range t2.words {
							add(relHypernym2, w, rank)
						}
					}
				}
			case "~", "~i":
				for _, w := range t.words {
					add(relHyponym, w, rank)
				}
			case "+", "\\", "<":
				// Lexical pointers relate one word of each synset.
				if p.src != 0 && p.src != self {
					continue
				}
				if p.dst != 0 && p.dst <= len(t.words) {
					add(relDeriv, t.words[p.dst-1], rank)
				} else {
					for _, w := range t.words {
						add(relDeriv, w, rank)
					}
				}
			case "=":
				for _, w := range t.words {
					add(relAttribute, w, rank)
				}
			}
		}
	}
	return out
}

// kind2 makes a dedupe key: a term related twice by the same kind (two
// senses) is kept once, at its best rank; different kinds are kept apart so
// the package can keep the strongest.
func kind2(k byte) string { return string(k) }

// writeMorph writes the morphology extract: "L word mask" per single-word
// lemma and "X pos inflected base" per exception, sorted.
func (wn *wordnet) writeMorph(w *strings.Builder) {
	w.WriteString("# WordNet 3.0 morphology: L <lemma> <pos mask n=1 v=2 a=4 r=8> <senses>; X <pos> <inflected> <base>\n")
	lemmas := make([]string, 0, len(wn.posMask))
	for l := range wn.posMask {
		lemmas = append(lemmas, l)
	}
	sort.Strings(lemmas)
	for _, l := range lemmas {
		fmt.Fprintf(w, "L %s %d %d\n", l, wn.posMask[l], wn.nsenses[l])
	}
	exc := append([][3]string(nil), wn.exc...)
	sort.Slice(exc, func(i, j int) bool {
		a, b := exc[i], exc[j]
		if a[0] != b[0] {
			return posOrder(a[0]) < posOrder(b[0])
		}
		if a[1] != b[1] {
			return a[1] < b[1]
		}
		return a[2] < b[2]
	})
	for _, e := range exc {
		fmt.Fprintf(w, "X %c %s %s\n", e[0][0], e[1], e[2])
	}
}

func posOrder(file string) int {
	for i, p := range wnPOS {
		if p.file == file {
			return i
		}
	}
	return len(wnPOS)
}

// writeRelations writes "lemma<TAB>kind:term:rank ..." per single-word
// lemma that has any relation, sorted by lemma.
func (wn *wordnet) writeRelations(w *strings.Builder) int {
	w.WriteString("# WordNet 3.0 relations: <lemma>\t<kind>:<term>:<sense rank> ...; kinds s synonym, c head of a multi-word synonym, h hypernym, H hypernym of hypernym, o hyponym, d derivation/pertainym/participle, a attribute\n")
	lemmas := make([]string, 0, len(wn.posMask))
	for l := range wn.posMask {
		lemmas = append(lemmas, l)
	}
	sort.Strings(lemmas)
	n := 0
	for _, l := range lemmas {
		rels := wn.relations(l)
		if len(rels) == 0 {
			continue
		}
		w.WriteString(l)
		w.WriteByte('\t')
		for i, r := range rels {
			if i > 0 {
				w.WriteByte(' ')
			}
			fmt.Fprintf(w, "%c:%s:%d", r.kind, r.term, r.rank)
			n++
		}
		w.WriteByte('\n')
	}
	return n
}

// known reports whether w is a single-word WordNet lemma.
func (wn *wordnet) known(w string) bool { return wn.posMask[w] != 0 }
