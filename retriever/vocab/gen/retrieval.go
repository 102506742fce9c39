package main

import (
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strings"

	"github.com/atriumdb/atrium/retriever/vocab"
)

// This file is a small table-retrieval experiment used to choose the
// expansion weights: it shows whether the expansions help ranking tables,
// not only whether they contain the right word. It is not Atrium's ranking.

var fromTable = regexp.MustCompile(`(?i)\b(?:from|join)\s+([a-z_][a-z0-9_]*)`)

// table is one pooled table: its id and its words with their weights (1 for
// a word of the name, the weight of the abbreviation for an expansion).
type table struct {
	id    string
	words map[string]float64
}

// pool builds the tables of the databases keep accepts.
func pool(lx *vocab.Lexicon, dbs []spiderDB, keep func(string) bool) []table {
	var out []table
	for _, d := range dbs {
		if !keep(d.DBID) {
			continue
		}
		for ti, tn := range d.TableNamesOrig {
			t := table{id: strings.ToLower(d.DBID + "." + tn), words: map[string]float64{}}
			add := func(s string) {
				for _, tok := range splitIdent(s) {
					l := lx.Lemma(tok)
					t.words[l] = 1
					for _, e := range lx.ExpandIdentifier(tok) {
						if e.Weight > t.words[e.Term] {
							t.words[e.Term] = e.Weight
						}
					}
				}
			}
			add(tn)
			add(d.TableNames[ti])
			for ci, c := range d.ColumnNamesOrg {
				if idx, _ := c[0].(float64); int(idx) == ti {
					s, _ := c[1].(string)
					add(s)
					h, _ := d.ColumnNames[ci][1].(string)
					add(h)
				}
			}
			out = append(out, t)
		}
	}
	return out
}

// goldTables returns the pooled ids of the tables a gold query reads.
func goldTables(db, query string) map[string]bool {
	g := map[string]bool{}
	for _, m := range fromTable.FindAllStringSubmatch(query, -1) {
		g[strings.ToLower(db+"."+m[1])] = true
	}
	return g
}

type retrievalStats struct {
	n                  int
	top1, cr5, mrr, r5 float64
}

// rank scores every pooled table for question q: per content word, the
// best of an exact match (1) and the expansions, times the idf of the
// matched word, summed over the words.
func rank(lx *vocab.Lexicon, tables []table, idf map[string]float64, q string) []int {
	scores := make([]float64, len(tables))
	type cand struct {
		term string
		w    float64
	}
	for _, w := range words(q) {
		if stopOrNumber(w) {
			continue
		}
		cands := []cand{{lx.Lemma(w), 1}}
		for _, e := range lx.Expand(w) {
			cands = append(cands, cand{e.Term, e.Weight})
		}
		for i, t := range tables {
			best := 0.0
			for _, c := range cands {
				if tw, ok := t.words[c.term]; ok {
					best = math.Max(best, c.w*tw*idf[c.term])
				}
			}
			scores[i] += best
		}
	}
	order := make([]int, len(tables))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return scores[order[a]] > scores[order[b]] })
	return order
}

func retrieval(lx *vocab.Lexicon, tables []table, qs []synQuestion, useSyn bool, f int) retrievalStats {
	df := map[string]int{}
	for _, t := range tables {
		for w := range t.words {
			df[w]++
		}
	}
	idf := map[string]float64{}
	for w, n := range df {
		idf[w] = math.Log(1 + float64(len(tables))/float64(n))
	}
	var st retrievalStats
	for _, q := range qs {
		if fold(q.DBID) != f {
			continue
		}
		gold := goldTables(q.DBID, q.Query)
		if len(gold) == 0 {
			continue
		}
		text := q.Original
		if useSyn {
			text = q.Question
		}
		order := rank(lx, tables, idf, text)
		st.n++
		if gold[tables[order[0]].id] {
			st.top1++
		}
		found := 0
		for i, o := range order {
			if gold[tables[o].id] {
				if found == 0 {
					st.mrr += 1 / float64(i+1)
				}
				if i < 5 {
					found++
				}
			}
		}
		st.r5 += float64(found) / float64(len(gold))
		if found == len(gold) {
			st.cr5++
		}
	}
	n := float64(st.n)
	st.top1 /= n
	st.cr5 /= n
	st.mrr /= n
	st.r5 /= n
	return st
}

// measureRetrieval prints the experiment for each lexicon, on the held-out
// Spider-Syn questions and on their Spider originals.
func measureRetrieval(w io.Writer, lexicons []namedLexicon, qs []synQuestion, dbs []spiderDB, f int) {
	fmt.Fprintf(w, "| lexicon | questions | Syn top-1 | Syn MRR | Syn R@5 | Syn CR@5 | Spider top-1 | Spider MRR | Spider CR@5 |\n")
	fmt.Fprintf(w, "| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, nl := range lexicons {
		tables := pool(nl.lx, dbs, func(db string) bool { return fold(db) == f })
		s := retrieval(nl.lx, tables, qs, true, f)
		o := retrieval(nl.lx, tables, qs, false, f)
		fmt.Fprintf(w, "| %s | %d | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |\n", nl.name, s.n, s.top1, s.mrr, s.r5, s.cr5, o.top1, o.mrr, o.cr5)
	}
}
