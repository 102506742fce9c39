// Command gen writes the data files the vocab package embeds, from WordNet
// 3.0 (Debian package wordnet-base) and the Spider and Spider-Syn training
// sets. Run from the repository root:
//
//	go run ./retriever/vocab/gen
//
// It writes retriever/vocab/data/{morph.txt.gz,wordnet.txt.gz,abbrev.tsv,
// learned.tsv} and is deterministic: the same inputs give the same bytes.
// Flags name the inputs (defaults: /usr/share/wordnet,
// ../shared/bench/spider, ../shared/bench/spider-syn) and the output
// directory. Only training questions (train_spider.json) and the schemas of
// training databases are read; dev.json never is.
//
// With -measure it writes nothing and prints instead how well the
// expansions bridge the substitutions of the Spider-Syn training questions
// of a held-out 20% of training databases, with the learned pairs mined
// from the other 80% (see docs/retrieval.md). With -tune it searches the
// expansion weights on another held-out fold and prints the best. With
// -hold-out-every N the learned pairs are mined without the training
// databases `atrium train-atr --hold-out-every N` holds out, so a binary
// built with them evaluates those databases fairly (docs/retrieval.md,
// step 7); the shipped files are written without it.
package main

import (
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/atriumdb/atrium/retriever/vocab"
	"github.com/atriumdb/atrium/retriever/vocab/mine"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run() error {
	wnDir := flag.String("wordnet", "/usr/share/wordnet", "WordNet 3.0 database directory")
	spiderDir := flag.String("spider", "../shared/bench/spider", "Spider directory (tables.json, train_spider.json)")
	synDir := flag.String("spider-syn", "../shared/bench/spider-syn", "Spider-Syn directory (train_spider.json)")
	out := flag.String("out", "retriever/vocab/data", "output directory")
	doMeasure := flag.Bool("measure", false, "print held-out figures (fold 0) instead of writing files")
	doTune := flag.Bool("tune", false, "search expansion weights on fold 1 instead of writing files")
	holdOut := flag.Int("hold-out-every", 0, "mine the learned pairs without the training databases atrium train-atr --hold-out-every N holds out (one in N by sorted db_id), so held-out evaluation is fair (0: all; the shipped pairs use 0)")
	holdOutShift := flag.Int("hold-out-shift", 0, "with -hold-out-every N, the databases held out are those atrium train-atr --hold-out-shift holds out (0 … N-1; 0: the shipped split)")
	holdOutWords := flag.Bool("hold-out-words", false, "with -hold-out-every, also drop the learned pairs whose schema word a held-out database's names carry, so the held-out questions' substitutions are as new to the pairs as a dev set's (docs/retrieval.md, step 9)")
	flag.Parse()

	wn, err := readWordNet(*wnDir)
	if err != nil {
		return err
	}
	var morph, rels strings.Builder
	wn.writeMorph(&morph)
	nrel := wn.writeRelations(&rels)
	morphGz, err := gzipBytes(morph.String())
	if err != nil {
		return err
	}
	relsGz, err := gzipBytes(rels.String())
	if err != nil {
		return err
	}
	wnLex, err := vocab.Parse(vocab.Sources{Morph: bytes.NewReader(morphGz), WordNet: bytes.NewReader(relsGz)})
	if err != nil {
		return err
	}

	var dbs []spiderDB
	var spiderQs []spiderQuestion
	var synQs []synQuestion
	if err := readJSON(filepath.Join(*spiderDir, "tables.json"), &dbs); err != nil {
		return err
	}
	if err := readJSON(filepath.Join(*spiderDir, "train_spider.json"), &spiderQs); err != nil {
		return err
	}
	if err := readJSON(filepath.Join(*synDir, "train_spider.json"), &synQs); err != nil {
		return err
	}
	if err := checkAligned(spiderQs, synQs); err != nil {
		return err
	}
	train := map[string]bool{}
	for _, q := range spiderQs {
		train[q.DBID] = true
	}
	ids := make([]string, 0, len(train))
	for id := range train {
		ids = append(ids, id)
	}
	if !mine.ValidShift(*holdOut, *holdOutShift) {
		return fmt.Errorf("-hold-out-shift needs -hold-out-every N and a shift from 0 to N-1")
	}
	held := mine.HeldOutShifted(ids, *holdOut, *holdOutShift)
	keep := func(db string) bool { return !held[strings.ToLower(db)] }

	if *doMeasure || *doTune {
		m := &measurer{known: wn.known, morphGz: morphGz, relsGz: relsGz, wnLex: wnLex, synQs: synQs, dbs: dbs, train: train}
		if *doTune {
			return m.tune(os.Stdout)
		}
		return m.report(os.Stdout, 0)
	}

	var ab strings.Builder
	hand, kept := writeAbbrev(&ab, mineAbbrev(wnLex, wn.known, dbs, train))
	var lw strings.Builder
	pairs := mine.Pairs(wnLex, synQs, keep)
	if *holdOutWords {
		if held == nil {
			return fmt.Errorf("-hold-out-words needs -hold-out-every")
		}
		pairs = mine.DropSchemaWords(pairs, heldOutWords(wnLex.Lemma, dbs, held))
	}
	if err := mine.WriteTSV(&lw, pairs); err != nil {
		return err
	}
	for name, b := range map[string][]byte{
		"morph.txt.gz":   morphGz,
		"wordnet.txt.gz": relsGz,
		"abbrev.tsv":     []byte(ab.String()),
		"learned.tsv":    []byte(lw.String()),
	} {
		if err := os.WriteFile(filepath.Join(*out, name), b, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	fmt.Fprintf(os.Stderr, "wordnet: %d lemmas, %d exceptions, %d relations; abbreviations: %d hand, %d mined; learned pairs: %d\n",
		len(wn.posMask), len(wn.exc), nrel, hand, kept, len(pairs))
	return nil
}

// gzipBytes compresses s with an empty header (no name, no time), so the
// bytes depend only on s and the Go version's compressor.
func gzipBytes(s string) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write([]byte(s)); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// heldOutWords are the base forms of every word in the names of the
// held-out databases' tables and columns.
func heldOutWords(lemma func(string) string, dbs []spiderDB, held map[string]bool) map[string]bool {
	var names []string
	for _, d := range dbs {
		if !held[strings.ToLower(d.DBID)] {
			continue
		}
		names = append(append(names, d.TableNamesOrig...), d.TableNames...)
		for _, cols := range [][][]interface{}{d.ColumnNamesOrg, d.ColumnNames} {
			for _, c := range cols {
				if s, ok := c[1].(string); ok {
					names = append(names, s)
				}
			}
		}
	}
	return mine.NameWords(lemma, names)
}
