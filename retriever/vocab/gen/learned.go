package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/atriumdb/atrium/retriever/vocab"
)

// stopOrNumber reports whether a question word is left out of the mined
// pairs: stop words and numbers carry no schema meaning.
func stopOrNumber(w string) bool {
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

// learnedPair is a question word, the schema word it replaced, how often,
// and how many substitutions the question word made in all.
type learnedPair struct {
	syn, orig string
	n, total  int
}

// mineLearned counts the substitutions of the Spider-Syn training questions
// of the databases keep accepts, and keeps the pairs seen at least twice or
// confirmed by WordNet (wn, a Lexicon without learned pairs).
func mineLearned(wn *vocab.Lexicon, qs []synQuestion, keep func(db string) bool) []learnedPair {
	count := map[[2]string]int{}
	total := map[string]int{}
	group := 0
	for _, q := range qs {
		if !keep(q.DBID) {
			continue
		}
		for _, s := range substitutions(wn.Lemma, q.Original, q.Question, &group) {
			count[[2]string{s.syn, s.orig}]++
			total[s.syn]++
		}
	}
	var out []learnedPair
	for k, n := range count {
		if n < 2 && !confirmed(wn, k[0], k[1]) {
			continue
		}
		out = append(out, learnedPair{k[0], k[1], n, total[k[0]]})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.syn != b.syn {
			return a.syn < b.syn
		}
		if a.n != b.n {
			return a.n > b.n
		}
		return a.orig < b.orig
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

func writeLearned(w *strings.Builder, pairs []learnedPair) {
	w.WriteString("# Learned from Spider-Syn training questions (never dev): <question word>\t<schema word it replaced>\t<times>\t<all replacements by the question word>.\n")
	w.WriteString("# Kept when seen twice or more, or confirmed by WordNet. Base forms.\n")
	for _, p := range pairs {
		fmt.Fprintf(w, "%s\t%s\t%d\t%d\n", p.syn, p.orig, p.n, p.total)
	}
}

// checkAligned verifies that Spider-Syn's training questions are Spider's,
// in the same order: the learned pairs assume spider_question is the
// original of question.
func checkAligned(spider []spiderQuestion, syn []synQuestion) error {
	if len(spider) != len(syn) {
		return fmt.Errorf("spider has %d training questions, spider-syn %d", len(spider), len(syn))
	}
	for i := range spider {
		if spider[i].DBID != syn[i].DBID || strings.Join(words(spider[i].Question), " ") != strings.Join(words(syn[i].Original), " ") {
			return fmt.Errorf("training question %d differs: %q / %q", i, spider[i].Question, syn[i].Original)
		}
	}
	return nil
}
