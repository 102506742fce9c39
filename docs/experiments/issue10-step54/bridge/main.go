// Command bridge is step 54's offline gate (docs/retrieval.md): does a
// logistic model over (question word, schema word) features pick the schema
// word a Spider-Syn rewording replaced, for the words the vocabulary leaves
// unbridged, precisely enough to rewrite them? Training data only: seven
// folds of the training databases (train-atr --hold-out-every 7 --hold-out-shift
// k), each scored by a model fitted on the other six, with that fold's strict
// learned pairs (gen -hold-out-every 7 -hold-out-shift k -hold-out-words -out
// DIR/gk).
//
//	go run ./docs/experiments/issue10-step54/bridge -pairs /tmp/b
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/atriumdb/atrium/internal/ident"
	"github.com/atriumdb/atrium/retriever/vocab"
	"github.com/atriumdb/atrium/retriever/vocab/mine"
)

type table struct {
	DBID    string   `json:"db_id"`
	Tables  []string `json:"table_names_original"`
	Columns [][2]any `json:"column_names_original"`
}

type poolWords struct {
	words map[string]int  // lemma → number of pool tables naming it
	table map[string]bool // lemma is a table-name word
	list  []string
	idx   []int32
}

type example struct {
	fold  int
	group int // one per (question, wording, word): the argmax unit
	x     []float64
	y     bool
	from  string
	to    string
}

const nFeat = 12

func main() {
	pairs := flag.String("pairs", "/tmp/b", "directory of g0 … g6 strict learned pairs")
	spider := flag.String("spider", "../shared/bench/spider", "Spider directory")
	syn := flag.String("syn", "../shared/bench/spider-syn", "Spider-Syn directory")
	minCos := flag.Float64("min-cos", 0.3, "pool words below this cosine are not candidates")
	flag.Parse()
	if err := run(*pairs, *spider, *syn, *minCos); err != nil {
		fmt.Fprintln(os.Stderr, "bridge:", err)
		os.Exit(1)
	}
}

func run(pairsDir, spiderDir, synDir string, minCos float64) error {
	var tabs []table
	if err := readJSON(filepath.Join(spiderDir, "tables.json"), &tabs); err != nil {
		return err
	}
	var qs []mine.Question
	if err := readJSON(filepath.Join(synDir, "train_spider.json"), &qs); err != nil {
		return err
	}
	ids := make([]string, len(qs))
	for i, q := range qs {
		ids[i] = q.DBID
	}
	foldOf := map[string]int{}
	for k := 0; k < 7; k++ {
		for db := range mine.HeldOutShifted(ids, 7, k) {
			foldOf[db] = k
		}
	}
	byDB := map[string]table{}
	for _, t := range tabs {
		byDB[strings.ToLower(t.DBID)] = t
	}

	var all []example
	var unbridged, subsAll [7]int
	group := 0
	for k := 0; k < 7; k++ {
		src := vocab.EmbeddedSources()
		f, err := os.Open(filepath.Join(pairsDir, fmt.Sprintf("g%d", k), "learned.tsv"))
		if err != nil {
			return err
		}
		src.Learned = f
		lx, err := vocab.Parse(src)
		f.Close()
		if err != nil {
			return err
		}
		emb := lx.Embeddings()
		// The fold's pool: its held-out databases, as the folds are scored.
		pw := poolWords{words: map[string]int{}, table: map[string]bool{}}
		for db, kk := range foldOf {
			if kk != k {
				continue
			}
			t := byDB[db]
			for _, n := range t.Tables {
				seen := map[string]bool{}
				for _, w := range ident.Split(n) {
					l := lx.Lemma(w)
					pw.table[l] = true
					if !seen[l] {
						seen[l] = true
						pw.words[l]++
					}
				}
			}
			for _, c := range t.Columns {
				name, _ := c[1].(string)
				ws := ident.Split(name)
				if n := len(ws); n > 1 && (ws[n-1] == "id" || ws[n-1] == "key") || name == "*" {
					continue
				}
				for _, w := range ws {
					pw.words[lx.Lemma(w)]++
				}
			}
		}
		for w := range pw.words {
			pw.list = append(pw.list, w)
		}
		sort.Strings(pw.list)
		for _, w := range pw.list {
			pw.idx = append(pw.idx, emb.Index(w))
		}

		for _, q := range qs {
			if foldOf[strings.ToLower(q.DBID)] != k {
				continue
			}
			g := 0
			subs := map[string]string{}
			for _, s := range mine.Substitutions(lx.Lemma, q.Original, q.Question, &g) {
				subs[s.Syn] = s.Orig
				subsAll[k]++
				if !handled(lx, pw, s.Form, lx.Lemma(s.Form)) {
					unbridged[k]++
				}
			}
			for wording, text := range []string{q.Question, q.Original} {
				words := mine.Words(text)
				for i, w := range words {
					if mine.StopOrNumber(w) {
						continue
					}
					l := lx.Lemma(w)
					if handled(lx, pw, w, l) {
						continue
					}
					wi := emb.Index(w)
					if wi < 0 {
						wi = emb.Index(l)
					}
					if wi < 0 {
						continue
					}
					exs := candidates(lx, emb, pw, words, i, w, l, wi, minCos)
					if len(exs) == 0 {
						continue
					}
					group++
					for j := range exs {
						exs[j].fold, exs[j].group = k, group
						exs[j].y = wording == 0 && subs[l] == exs[j].to
					}
					all = append(all, exs...)
				}
			}
		}
	}

	fmt.Printf("examples %d, groups %d\n", len(all), group)
	if os.Getenv("DUMP") != "" {
		cnt := map[string]int{}
		for _, e := range all {
			if e.x[2] == 1 && e.x[0] >= 0.6 {
				cnt[fmt.Sprintf("%s -> %s %v", e.from, e.to, e.y)]++
			}
		}
		type kv struct {
			k string
			n int
		}
		var kvs []kv
		for k, n := range cnt {
			kvs = append(kvs, kv{k, n})
		}
		sort.Slice(kvs, func(a, b int) bool { return kvs[a].n > kvs[b].n })
		for _, x := range kvs[:min(80, len(kvs))] {
			fmt.Println(x.n, x.k)
		}
		return nil
	}
	taus := []float64{0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9}
	type tally struct{ rw, ok int }
	var tot [7]tally
	var cosTot [3]tally // raw cosine bars 0.5, 0.6, 0.7 on the best word
	totUnb, totSubs := 0, 0
	for k := 0; k < 7; k++ {
		var train, test []example
		for _, e := range all {
			if e.fold == k {
				test = append(test, e)
			} else {
				train = append(train, e)
			}
		}
		mu, sd := standardise(train)
		w := fit(train, mu, sd)
		// tau: the smallest whose training precision is >= 0.80.
		tau := 1.0
		for _, t := range taus {
			rw, ok := decide(train, w, mu, sd, t)
			if rw > 0 && float64(ok)/float64(rw) >= 0.80 {
				tau = t
				break
			}
		}
		fmt.Printf("fold %d: subs %d unbridged %d; tau %.1f;", k, subsAll[k], unbridged[k], tau)
		for i, t := range taus {
			rw, ok := decide(test, w, mu, sd, t)
			tot[i].rw += rw
			tot[i].ok += ok
			if t == tau {
				fmt.Printf(" held-out rewrites %d correct %d", rw, ok)
			}
		}
		for i, bar := range []float64{0.5, 0.6, 0.7} {
			rw, ok := cosineBar(test, bar)
			cosTot[i].rw += rw
			cosTot[i].ok += ok
		}
		fmt.Println()
		totUnb += unbridged[k]
		totSubs += subsAll[k]
		if k == 0 {
			fmt.Printf("  weights %.3v\n", w)
		}
	}
	fmt.Printf("pooled: substitutions %d, unbridged by the lexicon %d\n", totSubs, totUnb)
	for i, t := range taus {
		fmt.Printf("  model tau %.1f: rewrites %5d correct %5d precision %.3f covers %.3f of unbridged\n",
			t, tot[i].rw, tot[i].ok, ratio(tot[i].ok, tot[i].rw), ratio(tot[i].ok, totUnb))
	}
	for i, bar := range []float64{0.5, 0.6, 0.7} {
		fmt.Printf("  cosine >= %.1f: rewrites %5d correct %5d precision %.3f covers %.3f of unbridged\n",
			bar, cosTot[i].rw, cosTot[i].ok, ratio(cosTot[i].ok, cosTot[i].rw), ratio(cosTot[i].ok, totUnb))
	}
	return nil
}

// handled: the pool names the word, or the rewrite already bridges it
// (an expansion of weight >= 0.3, i.e. >= 0.15 at QuestionExpansion 0.5).
func handled(lx *vocab.Lexicon, pw poolWords, w, l string) bool {
	if pw.words[l] > 0 || pw.words[w] > 0 {
		return true
	}
	for _, e := range lx.Expand(w) {
		if e.Weight >= 0.3 && pw.words[e.Term] > 0 {
			return true
		}
	}
	return false
}

func candidates(lx *vocab.Lexicon, emb *vocab.Embeddings, pw poolWords, words []string, at int, w, l string, wi int32, minCos float64) []example {
	type c struct {
		s   string
		cos float64
		si  int32
	}
	var cs []c
	for j, s := range pw.list {
		if pw.idx[j] < 0 {
			continue
		}
		if cos, ok := emb.CosineAt(wi, pw.idx[j]); ok && cos >= minCos {
			cs = append(cs, c{s, cos, pw.idx[j]})
		}
	}
	if len(cs) == 0 {
		return nil
	}
	sort.Slice(cs, func(a, b int) bool { return cs[a].cos > cs[b].cos || cs[a].cos == cs[b].cos && cs[a].s < cs[b].s })
	near := 0
	for _, x := range cs {
		if x.cos >= 0.5 {
			near++
		}
	}
	lexW := map[string]float64{}
	for _, e := range lx.Expand(w) {
		if e.Weight > lexW[e.Term] {
			lexW[e.Term] = e.Weight
		}
	}
	var ctx []int32
	for i, o := range words {
		if i == at || mine.StopOrNumber(o) {
			continue
		}
		if oi := emb.Index(o); oi >= 0 {
			ctx = append(ctx, oi)
		}
	}
	if len(cs) > 5 {
		cs = cs[:5]
	}
	out := make([]example, 0, len(cs))
	for r, x := range cs {
		other := 0.0
		if len(cs) > 1 {
			if r == 0 {
				other = cs[1].cos
			} else {
				other = cs[0].cos
			}
		}
		support := 0.0
		for _, oi := range ctx {
			if v, ok := emb.CosineAt(oi, x.si); ok && v > support {
				support = v
			}
		}
		pre := 0
		for pre < len(l) && pre < len(x.s) && l[pre] == x.s[pre] {
			pre++
		}
		isTable, adj := 0.0, 0.0
		if pw.table[x.s] {
			isTable = 1
		}
		if lx.Adjective(w) {
			adj = 1
		}
		rank0 := 0.0
		if r == 0 {
			rank0 = 1
		}
		out = append(out, example{x: []float64{
			x.cos,
			x.cos - other,
			rank0,
			math.Log1p(float64(wi)),
			math.Log1p(float64(x.si)),
			support,
			isTable,
			float64(pre) / float64(min(len(l), len(x.s))),
			lexW[x.s],
			math.Log1p(float64(near)),
			adj,
			math.Log1p(float64(pw.words[x.s])),
		}, from: l, to: x.s})
	}
	return out
}

func standardise(ex []example) (mu, sd []float64) {
	mu, sd = make([]float64, nFeat), make([]float64, nFeat)
	for _, e := range ex {
		for i, v := range e.x {
			mu[i] += v
		}
	}
	for i := range mu {
		mu[i] /= float64(len(ex))
	}
	for _, e := range ex {
		for i, v := range e.x {
			sd[i] += (v - mu[i]) * (v - mu[i])
		}
	}
	for i := range sd {
		sd[i] = math.Sqrt(sd[i] / float64(len(ex)))
		if sd[i] == 0 {
			sd[i] = 1
		}
	}
	return mu, sd
}

func prob(w []float64, x, mu, sd []float64) float64 {
	z := w[nFeat]
	for i, v := range x {
		z += w[i] * (v - mu[i]) / sd[i]
	}
	return 1 / (1 + math.Exp(-z))
}

// fit: L2-regularised logistic regression by full-batch gradient descent.
func fit(ex []example, mu, sd []float64) []float64 {
	w := make([]float64, nFeat+1)
	g := make([]float64, nFeat+1)
	for it := 0; it < 3000; it++ {
		clear(g)
		for _, e := range ex {
			p := prob(w, e.x, mu, sd)
			d := p
			if e.y {
				d = p - 1
			}
			for i, v := range e.x {
				g[i] += d * (v - mu[i]) / sd[i]
			}
			g[nFeat] += d
		}
		for i := range w {
			reg := 0.0
			if i < nFeat {
				reg = 1e-3 * w[i]
			}
			w[i] -= 2 * (g[i]/float64(len(ex)) + reg)
		}
	}
	return w
}

// decide: per word the most probable schema word, rewritten at p >= tau.
func decide(ex []example, w, mu, sd []float64, tau float64) (rw, ok int) {
	best := map[int]example{}
	bp := map[int]float64{}
	for _, e := range ex {
		p := prob(w, e.x, mu, sd)
		if p > bp[e.group] || best[e.group].to == "" {
			best[e.group], bp[e.group] = e, p
		}
	}
	for gid, e := range best {
		if bp[gid] >= tau {
			rw++
			if e.y {
				ok++
			}
		}
	}
	return rw, ok
}

func cosineBar(ex []example, bar float64) (rw, ok int) {
	for _, e := range ex {
		if e.x[2] == 1 && e.x[0] >= bar {
			rw++
			if e.y {
				ok++
			}
		}
	}
	return rw, ok
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}
