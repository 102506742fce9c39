// Command dbsoft is step 55's diagnostic (docs/retrieval.md): on score.sh's
// per-question files of the folds (abstention off), for answerable
// questions whose chosen tables are mostly of one database, how often a
// schema-level coverage of the question's words (literal 1, else the best
// GloVe cosine to any of the database's words when at least THR) ranks the
// gold database first, and prefers it to the chosen one where the choice
// was wrong. THR=2 is literal coverage alone.
//
//	THR=0.6 go run ./docs/experiments/issue10-step55/dbsoft syn
//
// (reads /tmp/folds/ho_WORDING_K/tables.json and /tmp/folds/s23/head/).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
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
type pq struct {
	Question     string   `json:"question"`
	DB           string   `json:"db"`
	Unanswerable bool     `json:"unanswerable"`
	Chosen       []string `json:"chosen"`
	Gold         []string `json:"gold"`
	Complete     bool     `json:"complete"`
}

var THR = 0.4

func main() {
	if v := os.Getenv("THR"); v != "" {
		fmt.Sscan(v, &THR)
	}
	lx, _ := vocab.Load()
	emb := lx.Embeddings()
	w := os.Args[1]
	type stat struct{ n, goldTop, chosenTop, goldBeatsChosen, tie int }
	var wrongDB, right stat
	for k := 0; k < 7; k++ {
		var tabs []table
		b, _ := os.ReadFile(fmt.Sprintf("/tmp/folds/ho_%s_%d/tables.json", w, k))
		json.Unmarshal(b, &tabs)
		dbw := map[string][]string{}
		dbset := map[string]map[string]bool{}
		for _, t := range tabs {
			db := strings.ToLower(t.DBID)
			set := map[string]bool{}
			for _, n := range t.Tables {
				for _, x := range ident.Split(n) {
					set[lx.Lemma(x)] = true
				}
			}
			for _, c := range t.Columns {
				n, _ := c[1].(string)
				ws := ident.Split(n)
				if l := len(ws); n == "*" || l > 1 && (ws[l-1] == "id" || ws[l-1] == "key") {
					continue
				}
				for _, x := range ws {
					set[lx.Lemma(x)] = true
				}
			}
			dbset[db] = set
			for x := range set {
				dbw[db] = append(dbw[db], x)
			}
			sort.Strings(dbw[db])
		}
		f, _ := os.Open(fmt.Sprintf("/tmp/folds/s23/head/%s_%d.jsonl", w, k))
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<24), 1<<26)
		for sc.Scan() {
			var d pq
			json.Unmarshal(sc.Bytes(), &d)
			if d.Unanswerable || len(d.Chosen) == 0 {
				continue
			}
			var qw []string
			for _, x := range mine.Words(d.Question) {
				if !mine.StopOrNumber(x) {
					qw = append(qw, lx.Lemma(x))
				}
			}
			score := map[string]float64{}
			for db, ws := range dbw {
				s := 0.0
				for _, x := range qw {
					if dbset[db][x] {
						s += 1
						continue
					}
					best := 0.0
					xi := emb.Index(x)
					if xi < 0 {
						continue
					}
					for _, y := range ws {
						if c, ok := emb.CosineAt(xi, emb.Index(y)); ok && c > best {
							best = c
						}
					}
					if best >= THR {
						s += best
					}
				}
				if len(qw) > 0 {
					score[db] = s / float64(len(qw))
				}
			}
			top, ts := "", -1.0
			for db, s := range score {
				if s > ts || s == ts && db < top {
					top, ts = db, s
				}
			}
			gold := strings.ToLower(d.DB)
			cdb := map[string]int{}
			for _, c := range d.Chosen {
				cdb[strings.ToLower(strings.SplitN(c, ".", 2)[0])]++
			}
			chosenDB, cn := "", 0
			for db, n := range cdb {
				if n > cn || n == cn && db < chosenDB {
					chosenDB, cn = db, n
				}
			}
			st := &right
			if chosenDB != gold {
				st = &wrongDB
			}
			st.n++
			if top == gold {
				st.goldTop++
			}
			if top == chosenDB {
				st.chosenTop++
			}
			if score[gold] > score[chosenDB] {
				st.goldBeatsChosen++
			}
			if score[gold] == score[chosenDB] && gold != chosenDB {
				st.tie++
			}
		}
		f.Close()
	}
	fmt.Printf("%s right-db questions: %+v\n", w, right)
	fmt.Printf("%s wrong-db questions: %+v\n", w, wrongDB)
}
