// Package mine mines the learned question-word → schema-word pairs of the
// vocabulary (retriever/vocab's learned.tsv) from Spider-Syn training
// questions: each Spider-Syn question is aligned with its Spider original
// and the replaced words are counted.
//
// Three programs use it: the generator (retriever/vocab/gen), which mines
// the shipped pairs from all training questions; the scorer's trainer
// (retriever/atrtrain), which mines them per fold of databases so that a
// training question never sees pairs mined from its own database; and the
// bridged report (retriever/vocab/bridged), which measures how much of the
// rewording the pairs bridge. HeldOut is their one hold-out rule.
package mine

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode"

	"github.com/atriumdb/atrium/internal/ident"
	"github.com/atriumdb/atrium/retriever/vocab"
)

// Question is one Spider-Syn training question with its Spider original
// (the fields of Spider-Syn's train_spider.json).
type Question struct {
	DBID     string `json:"db_id"`
	Question string `json:"question"`
	Original string `json:"spider_question"`
	Query    string `json:"query"`
}

// Pair is a question word, the schema word it replaced, how often (N), and
// how many substitutions the question word made in all (Total).
// Inflected marks a pair whose question word can be an adjective and was
// never seen in its base form: Spider-Syn says "goods" for products, and
// the pair must not read the adjective ("a good recipe") as a product. The
// inflection ("goods", "directed") is what settled the part of speech; a
// word that is no adjective ("athletes", "children") means in its base
// form what it means inflected.
type Pair struct {
	Syn, Orig string
	N, Total  int
	Inflected bool
}

// Pairs counts the substitutions of the questions of the databases keep
// accepts, and keeps the pairs seen at least twice or confirmed by WordNet.
// wn must be a Lexicon without learned pairs (morphology and WordNet only):
// it gives the base forms and the confirmation. The result is sorted, so
// the same questions give the same pairs.
func Pairs(wn *vocab.Lexicon, qs []Question, keep func(db string) bool) []Pair {
	count := map[[2]string]int{}
	bare := map[[2]string]bool{}
	total := map[string]int{}
	group := 0
	for _, q := range qs {
		if !keep(q.DBID) {
			continue
		}
		for _, s := range Substitutions(wn.Lemma, q.Original, q.Question, &group) {
			k := [2]string{s.Syn, s.Orig}
			count[k]++
			bare[k] = bare[k] || s.Form == s.Syn
			total[s.Syn]++
		}
	}
	var out []Pair
	for k, n := range count {
		if n < 2 && !confirmed(wn, k[0], k[1]) {
			continue
		}
		out = append(out, Pair{k[0], k[1], n, total[k[0]], !bare[k] && wn.Adjective(k[0])})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Syn != b.Syn {
			return a.Syn < b.Syn
		}
		if a.N != b.N {
			return a.N > b.N
		}
		return a.Orig < b.Orig
	})
	return out
}

func confirmed(wn *vocab.Lexicon, syn, orig string) bool {
	for _, e := range wn.Expand(syn) {
		if e.Term == orig {
			return true
		}
	}
	return false
}

// WriteTSV writes pairs in learned.tsv's format (vocab.Sources.Learned).
func WriteTSV(w io.Writer, pairs []Pair) error {
	var b strings.Builder
	b.WriteString("# Learned from Spider-Syn training questions (never dev): <question word>\t<schema word it replaced>\t<times>\t<all replacements by the question word>[\tinflected].\n")
	b.WriteString("# Kept when seen twice or more, or confirmed by WordNet. Base forms; \"inflected\": the question word, which can be an adjective, was seen only inflected, and the pair does not apply to its base form.\n")
	for _, p := range pairs {
		fmt.Fprintf(&b, "%s\t%s\t%d\t%d", p.Syn, p.Orig, p.N, p.Total)
		if p.Inflected {
			b.WriteString("\tinflected")
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// StopOrNumber reports whether a question word is left out of the mined
// pairs: stop words and numbers carry no schema meaning.
func StopOrNumber(w string) bool {
	if vocab.Stop(w) || len(w) < 2 {
		return true
	}
	for i := 0; i < len(w); i++ {
		if w[i] < '0' || w[i] > '9' {
			return false
		}
	}
	return true
}

// Words splits a question into lower-case words of letters and digits.
func Words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// opcode is one block of a token diff: a[i1:i2] became b[j1:j2].
type opcode struct {
	equal          bool
	i1, i2, j1, j2 int
}

// diff aligns two token lists by a longest common subsequence and returns
// the equal and changed blocks in order.
func diff(a, b []string) []opcode {
	n, m := len(a), len(b)
	l := make([][]int, n+1)
	for i := range l {
		l[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				l[i][j] = l[i+1][j+1] + 1
			} else {
				l[i][j] = max(l[i+1][j], l[i][j+1])
			}
		}
	}
	var ops []opcode
	i, j := 0, 0
	ci, cj := 0, 0 // start of the pending changed block
	flush := func() {
		if ci < i || cj < j {
			ops = append(ops, opcode{false, ci, i, cj, j})
		}
	}
	for i < n && j < m {
		switch {
		case a[i] == b[j]:
			flush()
			ops = append(ops, opcode{true, i, i + 1, j, j + 1})
			i++
			j++
			ci, cj = i, j
		case l[i+1][j] >= l[i][j+1]:
			i++
		default:
			j++
		}
	}
	i, j = n, m
	flush()
	return ops
}

// Substitution is one schema word a Spider-Syn question replaced: Syn is
// the question's word, Orig the schema word of the Spider original, both
// base forms, and Form the question's word as written (lower case). Group
// numbers the changed block, so the words of a phrase ("head office" for
// headquarters) share one.
type Substitution struct {
	Syn, Orig, Form string
	Group           int
}

// Substitutions aligns an original question and its Spider-Syn version and
// returns the replaced words: one for one in blocks of equal length, every
// content word of a phrase for a single word in the other, nothing for
// other shapes (rewordings the alignment cannot pair). group is the running
// block number, carried across calls.
func Substitutions(lemma func(string) string, orig, syn string, group *int) []Substitution {
	a, b := Words(orig), Words(syn)
	var out []Substitution
	add := func(s, o string) {
		if StopOrNumber(s) || StopOrNumber(o) {
			return
		}
		form := s
		s, o = lemma(s), lemma(o)
		if s == o {
			return
		}
		out = append(out, Substitution{s, o, form, *group})
	}
	for _, op := range diff(a, b) {
		if op.equal {
			continue
		}
		*group++
		na, nb := op.i2-op.i1, op.j2-op.j1
		switch {
		case na == 0 || nb == 0:
		case na == nb:
			for k := 0; k < na; k++ {
				add(b[op.j1+k], a[op.i1+k])
				*group++
			}
		case na == 1:
			for k := op.j1; k < op.j2; k++ {
				add(b[k], a[op.i1])
			}
		case nb == 1:
			for k := op.i1; k < op.i2; k++ {
				add(b[op.j1], a[k])
			}
		}
	}
	return out
}

// HeldOut are the databases (lower-case) that atrium train-atr
// --hold-out-every every leaves out of training: of the sorted distinct
// ids, those at positions every/2 modulo every. The learned pairs (gen
// -hold-out-every) and the bridged report hold the same ones out, so a
// held-out evaluation is fair to all three. nil when every ≤ 0.
func HeldOut(ids []string, every int) map[string]bool { return HeldOutShifted(ids, every, 0) }

// ValidShift reports whether shift names one of the folds of every: 0
// (the shipped split, also without a hold-out) or 1 … every−1.
func ValidShift(every, shift int) bool {
	return shift == 0 || (every > 0 && shift > 0 && shift < every)
}

// HeldOutShifted is HeldOut with the held-out positions moved shift places
// on (modulo every): shifts 0 … every−1 split the databases into every
// disjoint folds, for a cross-validated held-out evaluation (each fold's
// scorer trained without it). Shift 0 is HeldOut.
func HeldOutShifted(ids []string, every, shift int) map[string]bool {
	if every <= 0 {
		return nil
	}
	pos := ((every/2+shift)%every + every) % every
	seen := map[string]bool{}
	var sorted []string
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			sorted = append(sorted, id)
		}
	}
	sort.Strings(sorted)
	out := map[string]bool{}
	for i, id := range sorted {
		if i%every == pos {
			out[strings.ToLower(id)] = true
		}
	}
	return out
}

// NameWords are the base forms of the words of names (table and column
// identifiers, split on case, digits and punctuation): what a database's
// schema says, for dropping the learned pairs that bridge to it.
func NameWords(lemma func(string) string, names []string) map[string]bool {
	out := map[string]bool{}
	for _, n := range names {
		for _, w := range ident.Split(n) {
			out[lemma(w)] = true
		}
	}
	return out
}

// DropSchemaWords keeps the pairs whose schema word is not in words, in
// place. Mined without some databases' questions, the pairs still bridge
// most of those questions' substitutions (Spider-Syn's annotators reworded
// the same schema words the same way across databases); dev's
// substitutions are mostly new, so evaluating or training on those
// databases with all pairs overstates how well retrieval generalises. gen
// -hold-out-words and train-atr --learned-pairs-strict drop the pairs that
// bridge to the words of the databases left out.
func DropSchemaWords(pairs []Pair, words map[string]bool) []Pair {
	out := pairs[:0]
	for _, p := range pairs {
		if !words[p.Orig] {
			out = append(out, p)
		}
	}
	return out
}
