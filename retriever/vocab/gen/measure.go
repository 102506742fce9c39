package main

import (
	"fmt"
	"io"
	"sort"

	"github.com/atriumdb/atrium/retriever/vocab"
)

// measure prints, for each lexicon, how well Expand bridges the
// substitutions of the held-out Spider-Syn training questions: recall (the
// replaced schema word is among the expansions of the question's word, or
// among its top 5), the average list size of those words and of every
// content word of the held-out questions, and how many expansions per
// content word hit a word of the question's own schema (useful) or not.
func measure(w io.Writer, lexicons []namedLexicon, qs []synQuestion, dbs []spiderDB, f int) {
	schema := map[string]map[string]bool{}
	for _, d := range dbs {
		if fold(d.DBID) != f {
			continue
		}
		set := map[string]bool{}
		add := func(s string) {
			for _, t := range splitIdent(s) {
				set[lexicons[0].lx.Lemma(t)] = true
			}
		}
		for _, t := range d.TableNames {
			add(t)
		}
		for _, t := range d.TableNamesOrig {
			add(t)
		}
		for i := range d.ColumnNames {
			s, _ := d.ColumnNames[i][1].(string)
			add(s)
			s, _ = d.ColumnNamesOrg[i][1].(string)
			add(s)
		}
		schema[d.DBID] = set
	}
	type kindStat struct{ hits, schema, other int }
	byKind := map[string]*kindStat{}
	kindOf := func(k string) *kindStat {
		if byKind[k] == nil {
			byKind[k] = &kindStat{}
		}
		return byKind[k]
	}
	fmt.Fprintf(w, "| lexicon | substitutions | recall | recall@5 | phrase recall | avg size (substituted words) | avg size (all content words) | schema hits / word | non-schema / word |\n")
	fmt.Fprintf(w, "| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, nl := range lexicons {
		var subs, hit, hit5, subSize, words_, wordSize, schemaHit, schemaMiss int
		groups, groupHit := map[int]bool{}, map[int]bool{}
		group := 0
		for _, q := range qs {
			if fold(q.DBID) != f {
				continue
			}
			for _, s := range substitutions(nl.lx.Lemma, q.Original, q.Question, &group) {
				subs++
				groups[s.Group] = true
				ex := nl.lx.Expand(s.Form)
				subSize += len(ex)
				for i, e := range ex {
					if e.Term == s.Orig {
						hit++
						if nl.name == lexicons[len(lexicons)-1].name {
							kindOf(e.Kind).hits++
						}
						groupHit[s.Group] = true
						if i < 5 {
							hit5++
						}
						break
					}
				}
			}
			set := schema[q.DBID]
			for _, t := range words(q.Question) {
				if stopOrNumber(t) {
					continue
				}
				words_++
				ex := nl.lx.Expand(t)
				wordSize += len(ex)
				for _, e := range ex {
					last := nl.name == lexicons[len(lexicons)-1].name
					if set[e.Term] {
						schemaHit++
						if last {
							kindOf(e.Kind).schema++
						}
					} else {
						schemaMiss++
						if last {
							kindOf(e.Kind).other++
						}
					}
				}
			}
		}
		fmt.Fprintf(w, "| %s | %d | %.3f | %.3f | %.3f | %.1f | %.1f | %.2f | %.2f |\n", nl.name, subs,
			frac(hit, subs), frac(hit5, subs), frac(len(groupHit), len(groups)),
			frac(subSize, subs), frac(wordSize, words_), frac(schemaHit, words_), frac(schemaMiss, words_))
	}
	last := lexicons[len(lexicons)-1].name
	fmt.Fprintf(w, "\nby kind (%s): kind, substitutions bridged, expansions naming a schema word, others\n", last)
	names := make([]string, 0, len(byKind))
	for k := range byKind {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		st := byKind[k]
		fmt.Fprintf(w, "  %-12s %5d %6d %7d (%.3f schema share)\n", k, st.hits, st.schema, st.other, frac(st.schema, st.schema+st.other))
	}
}

type namedLexicon struct {
	name string
	lx   *vocab.Lexicon
}

func frac(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// missed lists the most frequent held-out substitutions lex does not bridge.
func missed(w io.Writer, lx *vocab.Lexicon, qs []synQuestion, n, f int) {
	count := map[[2]string]int{}
	group := 0
	for _, q := range qs {
		if fold(q.DBID) != f {
			continue
		}
		for _, s := range substitutions(lx.Lemma, q.Original, q.Question, &group) {
			found := false
			for _, e := range lx.Expand(s.Form) {
				if e.Term == s.Orig {
					found = true
				}
			}
			if !found {
				count[[2]string{s.Syn, s.Orig}]++
			}
		}
	}
	type kv struct {
		k [2]string
		n int
	}
	var all []kv
	for k, c := range count {
		all = append(all, kv{k, c})
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].n != all[j].n {
			return all[i].n > all[j].n
		}
		return all[i].k[0]+all[i].k[1] < all[j].k[0]+all[j].k[1]
	})
	for i := 0; i < n && i < len(all); i++ {
		fmt.Fprintf(w, "%s→%s ×%d; ", all[i].k[0], all[i].k[1], all[i].n)
	}
	fmt.Fprintln(w)
}
