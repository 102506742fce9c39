// Command foldun writes, for each of the seven cross-validation folds of
// docs/retrieval.md (folds.py), the fold's unanswerable set as dev.json is
// built for Spider dev (retriever/evaluate/unanswerable/gen): every held-out
// question asked against the fold's pool without its own database, left out
// when another database of the fold has tables named like all its gold
// tables. OUTDIR/un_sp_K.json and OUTDIR/un_syn_K.json hold the same
// questions in Spider's and Spider-Syn's wording (step 23).
//
//	go run ./docs/experiments/issue10-step23/foldun FOLDDIR
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/atriumdb/atrium/catalog/benchload"
)

type entry struct {
	DBID       string   `json:"db_id"`
	Question   string   `json:"question"`
	Query      string   `json:"query"`
	Kind       string   `json:"kind"`
	ExcludeDBs []string `json:"exclude_dbs"`
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: foldun FOLDDIR")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "foldun:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	for k := 0; k < 7; k++ {
		sp, err := benchload.LoadBench(filepath.Join(dir, fmt.Sprintf("ho_sp_%d", k)), "dev.json")
		if err != nil {
			return err
		}
		syn, err := benchload.LoadBench(filepath.Join(dir, fmt.Sprintf("ho_syn_%d", k)), "dev.json")
		if err != nil {
			return err
		}
		if len(syn.Questions) != len(sp.Questions) {
			return fmt.Errorf("fold %d: %d Spider questions, %d Spider-Syn", k, len(sp.Questions), len(syn.Questions))
		}
		var ids []string
		for id := range sp.DBs {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		var outSp, outSyn []entry
		skipped := 0
		for i := range sp.Questions {
			q := &sp.Questions[i]
			gold, err := sp.GoldTables(q)
			if err != nil {
				continue
			}
			if sp.AnsweredElsewhere(q.DBID, gold, ids) {
				skipped++
				continue
			}
			e := entry{DBID: q.DBID, Question: q.Question, Kind: "foreign_db", ExcludeDBs: []string{q.DBID}}
			outSp = append(outSp, e)
			e.Question = syn.Questions[i].Question
			outSyn = append(outSyn, e)
		}
		for name, es := range map[string][]entry{"sp": outSp, "syn": outSyn} {
			b, err := json.MarshalIndent(es, "", " ")
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("un_%s_%d.json", name, k)), b, 0o644); err != nil {
				return err
			}
		}
		fmt.Printf("fold %d: %d unanswerable questions (%d left out: another database has their gold tables' names)\n", k, len(outSp), skipped)
	}
	return nil
}
