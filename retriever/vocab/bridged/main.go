// Command bridged reports how much of Spider-Syn's rewording the vocabulary
// bridges: of the words Spider-Syn substituted for a schema word (aligned
// with mine.Substitutions, as the learned pairs are mined), the share whose
// expansions (vocab.Lexicon.Expand) name the replaced word, and the share
// bridged by a learned pair. It reads the dev questions and the training
// questions of the databases atrium train-atr --hold-out-every N holds out,
// so a held-out protocol can be compared with dev before trusting it
// (docs/retrieval.md, step 9).
//
//	go run ./retriever/vocab/bridged -syn ../shared/bench/spider-syn [-learned FILE] [-top 20]
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/atriumdb/atrium/retriever/vocab"
	"github.com/atriumdb/atrium/retriever/vocab/mine"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bridged:", err)
		os.Exit(1)
	}
}

func run() error {
	synDir := flag.String("syn", "../shared/bench/spider-syn", "Spider-Syn directory (dev.json, train_spider.json)")
	learned := flag.String("learned", "", "learned pairs to use instead of the embedded ones (a learned.tsv; /dev/null: none)")
	every := flag.Int("hold-out-every", 7, "held-out training databases: one in N by sorted db_id, as atrium train-atr")
	top := flag.Int("top", 0, "also list the N most frequent dev substitutions left unbridged (a diagnostic: adding them to the vocabulary would be tuning on dev)")
	flag.Parse()

	src := vocab.EmbeddedSources()
	if *learned != "" {
		f, err := os.Open(*learned)
		if err != nil {
			return err
		}
		defer f.Close()
		src.Learned = f
	}
	lx, err := vocab.Parse(src)
	if err != nil {
		return err
	}
	var dev, train []mine.Question
	if err := readJSON(filepath.Join(*synDir, "dev.json"), &dev); err != nil {
		return err
	}
	if err := readJSON(filepath.Join(*synDir, "train_spider.json"), &train); err != nil {
		return err
	}
	ids := make([]string, len(train))
	for i, q := range train {
		ids[i] = q.DBID
	}
	held := mine.HeldOut(ids, *every)
	var ho []mine.Question
	for _, q := range train {
		if held[strings.ToLower(q.DBID)] {
			ho = append(ho, q)
		}
	}
	fmt.Printf("%-24s %13s %8s %10s\n", "questions", "substitutions", "bridged", "by learned")
	report(os.Stdout, lx, "dev", dev, 0)
	report(os.Stdout, lx, fmt.Sprintf("held-out (1 in %d)", *every), ho, 0)
	if *top > 0 {
		report(os.Stdout, lx, "dev", dev, *top)
	}
	return nil
}

func report(w io.Writer, lx *vocab.Lexicon, name string, qs []mine.Question, top int) {
	group := 0
	var subs, hit, learned int
	missed := map[string]int{}
	for _, q := range qs {
		for _, s := range mine.Substitutions(lx.Lemma, q.Original, q.Question, &group) {
			subs++
			found := false
			for _, e := range lx.Expand(s.Form) {
				if e.Term == s.Orig {
					found = true
					hit++
					if e.Kind == vocab.KindLearned {
						learned++
					}
					break
				}
			}
			if !found {
				missed[s.Syn+" → "+s.Orig]++
			}
		}
	}
	if top == 0 {
		fmt.Fprintf(w, "%-24s %13d %8.3f %10.3f\n", name, subs, share(hit, subs), share(learned, subs))
		return
	}
	keys := make([]string, 0, len(missed))
	for k := range missed {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if missed[keys[i]] != missed[keys[j]] {
			return missed[keys[i]] > missed[keys[j]]
		}
		return keys[i] < keys[j]
	})
	fmt.Fprintf(w, "most frequent unbridged %s substitutions (question word → schema word):\n", name)
	for _, k := range keys[:min(top, len(keys))] {
		fmt.Fprintf(w, "  %4d  %s\n", missed[k], k)
	}
}

func share(n, d int) float64 {
	if d == 0 {
		return 0
	}
	return float64(n) / float64(d)
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
