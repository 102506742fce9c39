// Command renamed writes a copy of a Spider-format benchmark whose schemas
// are renamed word by word (synonyms people use for a schema word,
// identifier abbreviations, words run together: the renamer of `atrium
// train-atr --augment-schemas`), for measuring retrieval on schema names a
// scorer was not shaped on, as the kept-back real-world benchmarks of
// issue 10 are. The questions keep their wording; each one's gold SQL is
// replaced by a SELECT over its gold tables' new names, which is all
// `atrium eval` reads of it. Sample values are not carried over: compare
// against the original benchmark's tables.json and questions alone (the
// -plain directory), not against a run with its database dumps.
//
//	go run ./retriever/evaluate/renamed -bench ../shared/bench/spider -out /tmp/spider_ren -plain /tmp/spider_plain
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/atriumdb/atrium/catalog/benchload"
	"github.com/atriumdb/atrium/retriever/atrtrain"
)

// entry is one question of the written file (Spider's fields eval reads).
type entry struct {
	DBID     string `json:"db_id"`
	Question string `json:"question"`
	Query    string `json:"query"`
}

func main() {
	bench := flag.String("bench", "../shared/bench/spider", "Spider-format benchmark directory (tables.json and the questions file)")
	questions := flag.String("questions", "dev.json", "questions file of -bench")
	out := flag.String("out", "", "directory to write the renamed tables.json and dev.json into (required)")
	plain := flag.String("plain", "", "also write the original schemas and the same questions here, without database dumps, as the like-for-like reference (optional)")
	seed := flag.Uint64("seed", 99, "renamer seed")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "renamed: -out is required")
		os.Exit(2)
	}
	if err := run(*bench, *questions, *out, *plain, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "renamed:", err)
		os.Exit(1)
	}
}

func run(benchDir, file, out, plain string, seed uint64) error {
	b, err := benchload.LoadBench(benchDir, file)
	if err != nil {
		return err
	}
	dbs, tables := atrtrain.RenameBench(b, seed)
	ren := make([]entry, 0, len(b.Questions))
	orig := make([]entry, 0, len(b.Questions))
	skipped := 0
	for i := range b.Questions {
		q := &b.Questions[i]
		gold, err := b.GoldTables(q)
		if err != nil {
			skipped++ // a gold SQL neither parser reads: eval skips it too
			continue
		}
		names := make([]string, len(gold))
		origNames := make([]string, len(gold))
		for j, g := range gold {
			nt, ok := tables[g]
			if !ok {
				return fmt.Errorf("question %d: gold table %s has no renamed copy", i, g)
			}
			_, t, _ := strings.Cut(nt, ".")
			names[j] = strconv.Quote(t)
			_, t, _ = strings.Cut(g, ".")
			origNames[j] = strconv.Quote(t)
		}
		ren = append(ren, entry{DBID: q.DBID + "_aug", Question: q.Question, Query: "SELECT * FROM " + strings.Join(names, ", ")})
		orig = append(orig, entry{DBID: q.DBID, Question: q.Question, Query: "SELECT * FROM " + strings.Join(origNames, ", ")})
	}
	if err := write(out, dbs, ren); err != nil {
		return err
	}
	if plain != "" {
		odbs := make([]benchload.Database, 0, len(b.DBs))
		for _, d := range dbs {
			odbs = append(odbs, *b.DBs[strings.ToLower(strings.TrimSuffix(d.DBID, "_aug"))])
		}
		if err := write(plain, odbs, orig); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "renamed: %d databases, %d questions (%d skipped: gold SQL unreadable)\n", len(dbs), len(ren), skipped)
	return nil
}

func write(dir string, dbs []benchload.Database, qs []entry) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, v := range map[string]any{"tables.json": dbs, "dev.json": qs} {
		data, err := json.MarshalIndent(v, "", " ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name), append(data, '\n'), 0o644); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	return nil
}
