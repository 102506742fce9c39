// Command gen writes the unanswerable question sets of `atrium eval`
// (retriever/evaluate/unanswerable): deterministic for a given benchmark
// directory and seed.
//
//	go run ./retriever/evaluate/unanswerable/gen -bench ../shared/bench/spider -out retriever/evaluate/unanswerable
//
// dev.json (the DEV set; never tune on it): the off-topic questions of
// offtopic_dev.txt, and every Spider dev question asked against the dev
// pool without its own database (exclude_dbs). A dev question is left out
// when another dev database has tables of the same names as all its gold
// tables ("How many singers do we have?" without concert_singer is still
// answered by singer.singer), so the set holds only questions no table of
// the pool answers.
//
// train.json (for tuning the abstention floor): Spider train questions in
// 20-database pools drawn from the training databases (pool_dbs), half with
// their own database (answerable, gold SQL kept) and half without it
// (unanswerable, same duplicate rule), plus the off-topic questions of
// offtopic_tune.txt in such pools. train_syn.json is the same sample in
// Spider-Syn's wording (synonyms for schema words), so that the floors are
// not tuned on questions that repeat the schema's words.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/atriumdb/atrium/catalog/benchload"
)

// entry is one question of a generated file (Spider format plus the pool
// fields benchload.Question reads).
type entry struct {
	DBID        string   `json:"db_id"`
	Question    string   `json:"question"`
	Query       string   `json:"query"`
	Kind        string   `json:"kind,omitempty"`
	ExcludeDBs  []string `json:"exclude_dbs,omitempty"`
	PoolDBs     []string `json:"pool_dbs,omitempty"`
	SpiderQuery string   `json:"spider_query,omitempty"`
}

func main() {
	bench := flag.String("bench", "../shared/bench/spider", "Spider benchmark directory (tables.json, dev.json, train_spider.json)")
	out := flag.String("out", "retriever/evaluate/unanswerable", "directory of offtopic_*.txt; dev.json and train.json are written there")
	seed := flag.Uint64("seed", 1, "seed of the training sample and pools")
	nTrain := flag.Int("train", 1000, "training questions per half (answerable, unanswerable)")
	poolDBs := flag.Int("pool", 20, "databases per training pool")
	syn := flag.String("syn-bench", "../shared/bench/spider-syn", "Spider-Syn benchmark directory: train_syn.json holds the same training sample in its synonym wording (empty: skip)")
	flag.Parse()
	if err := run(*bench, *syn, *out, *seed, *nTrain, *poolDBs); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(benchDir, synDir, out string, seed uint64, nTrain, poolDBs int) error {
	dev, err := benchload.LoadBench(benchDir, "dev.json")
	if err != nil {
		return err
	}
	train, err := benchload.LoadBench(benchDir, "train_spider.json")
	if err != nil {
		return err
	}
	var synTrain *benchload.Bench
	if synDir != "" {
		if synTrain, err = benchload.LoadBench(synDir, "train_spider.json"); err != nil {
			return err
		}
		if len(synTrain.Questions) != len(train.Questions) {
			return fmt.Errorf("%s has %d training questions, %s %d", synDir, len(synTrain.Questions), benchDir, len(train.Questions))
		}
	}
	offDev, err := readLines(filepath.Join(out, "offtopic_dev.txt"))
	if err != nil {
		return err
	}
	var devSet []entry
	for _, q := range offDev {
		devSet = append(devSet, entry{Question: q, Kind: "offtopic"})
	}
	devDBs := dbIDs(dev.Questions)
	skipped := 0
	for i := range dev.Questions {
		q := &dev.Questions[i]
		gold, err := dev.GoldTables(q)
		if err != nil {
			return err
		}
		if dev.AnsweredElsewhere(q.DBID, gold, devDBs) {
			skipped++
			continue
		}
		devSet = append(devSet, entry{DBID: q.DBID, Question: q.Question, Kind: "foreign_db", ExcludeDBs: []string{q.DBID}, SpiderQuery: q.GoldSQL()})
	}
	if err := writeJSON(filepath.Join(out, "dev.json"), devSet); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "dev.json: %d off-topic, %d foreign-db questions (%d dev questions left out: another database has their gold tables' names)\n",
		len(offDev), len(devSet)-len(offDev), skipped)

	offTune, err := readLines(filepath.Join(out, "offtopic_tune.txt"))
	if err != nil {
		return err
	}
	trainDBs := dbIDs(train.Questions)
	rng := rand.New(rand.NewPCG(seed, 0xab57a1))
	order := rng.Perm(len(train.Questions))
	pool := func(own string, withOwn bool) []string {
		var p []string
		if withOwn {
			p = append(p, own)
		}
		for _, i := range rng.Perm(len(trainDBs)) {
			if len(p) >= poolDBs {
				break
			}
			if trainDBs[i] != own {
				p = append(p, trainDBs[i])
			}
		}
		sort.Strings(p)
		return p
	}
	var trainSet, synSet []entry
	// syn adds the Spider-Syn wording of training question qi (same gold,
	// same pool).
	syn := func(qi int, e entry) {
		if synTrain != nil {
			e.Question = synTrain.Questions[qi].Question
			synSet = append(synSet, e)
		}
	}
	nAns, nUn, tSkipped := 0, 0, 0
	for _, qi := range order {
		if nAns >= nTrain && nUn >= nTrain {
			break
		}
		q := &train.Questions[qi]
		gold, err := train.GoldTables(q)
		if err != nil {
			continue
		}
		if nAns < nTrain {
			e := entry{DBID: q.DBID, Question: q.Question, Query: q.GoldSQL(), PoolDBs: pool(q.DBID, true)}
			trainSet = append(trainSet, e)
			syn(qi, e)
			nAns++
			continue
		}
		p := pool(q.DBID, false)
		if train.AnsweredElsewhere(q.DBID, gold, p) {
			tSkipped++
			continue
		}
		e := entry{DBID: q.DBID, Question: q.Question, Kind: "foreign_db", PoolDBs: p, SpiderQuery: q.GoldSQL()}
		trainSet = append(trainSet, e)
		syn(qi, e)
		nUn++
	}
	for _, q := range offTune {
		e := entry{Question: q, Kind: "offtopic", PoolDBs: pool("", false)}
		trainSet = append(trainSet, e)
		if synTrain != nil {
			synSet = append(synSet, e)
		}
	}
	if synTrain != nil {
		if err := writeJSON(filepath.Join(out, "train_syn.json"), synSet); err != nil {
			return err
		}
	}
	if err := writeJSON(filepath.Join(out, "train.json"), trainSet); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "train.json: %d answerable, %d foreign-db (%d left out), %d off-topic questions\n", nAns, nUn, tSkipped, len(offTune))
	return nil
}

func dbIDs(qs []benchload.Question) []string {
	seen := map[string]bool{}
	var out []string
	for _, q := range qs {
		if !seen[q.DBID] {
			seen[q.DBID] = true
			out = append(out, q.DBID)
		}
	}
	sort.Strings(out)
	return out
}

func readLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		out = append(out, l)
	}
	return out, sc.Err()
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
