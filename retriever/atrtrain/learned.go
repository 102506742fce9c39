package atrtrain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/atriumdb/atrium/catalog/benchload"
	"github.com/atriumdb/atrium/retriever"
	"github.com/atriumdb/atrium/retriever/vocab"
	"github.com/atriumdb/atrium/retriever/vocab/mine"
)

// Cross-fitted learned pairs (TrainConfig.LearnedPairsFolds).
//
// The vocabulary's learned pairs (question word → schema word) are mined
// from Spider-Syn's training questions, the same questions the scorer
// trains on. With the shipped pairs a Spider-Syn training question's
// substitutions are bridged by pairs mined from that very question, so the
// scorer learns to trust learned-pair evidence more than it deserves on
// wordings it has not seen (docs/retrieval.md, step 6). With k folds of the
// training databases, the questions of fold f are prepared with pairs mined
// from the other folds only, as dev questions are served with pairs mined
// from databases other than theirs. Serving keeps the pairs mined from all
// of Spider-Syn train.

// learnedFolds assigns each database (lower-case) to one of k folds: the
// sorted ids in turn, so folds differ in size by at most one and the
// assignment depends only on the set of databases.
func learnedFolds(dbs []string, k int) map[string]int {
	ids := make([]string, 0, len(dbs))
	seen := map[string]bool{}
	for _, d := range dbs {
		d = strings.ToLower(d)
		if !seen[d] {
			seen[d] = true
			ids = append(ids, d)
		}
	}
	sort.Strings(ids)
	out := make(map[string]int, len(ids))
	for i, id := range ids {
		out[id] = i % k
	}
	return out
}

// foldPairs mines, for each of the k folds, the learned pairs of the
// questions of the other folds' databases. wn is a lexicon without learned
// pairs (wordNetLexicon). A database absent from folds is mined in every
// fold (it belongs to none).
//
// strict, when not nil, maps each database (lower-case) to the base forms
// of its table and column names; a fold's pairs then also lose every pair
// whose schema word one of the fold's databases carries. Pairs mined from
// other databases still bridge most of a fold's substitutions, because
// Spider-Syn reworded the same schema words the same way across databases;
// dev's substitutions are mostly new to the pairs (docs/retrieval.md, step
// 9), and strict folds train the scorer on that condition.
func foldPairs(wn *vocab.Lexicon, qs []mine.Question, folds map[string]int, k int, strict map[string]map[string]bool) [][]mine.Pair {
	out := make([][]mine.Pair, k)
	for f := range k {
		out[f] = mine.Pairs(wn, qs, func(db string) bool {
			g, ok := folds[strings.ToLower(db)]
			return !ok || g != f
		})
		if strict == nil {
			continue
		}
		words := map[string]bool{}
		for db, g := range folds {
			if g == f {
				for w := range strict[db] {
					words[w] = true
				}
			}
		}
		out[f] = mine.DropSchemaWords(out[f], words)
	}
	return out
}

// schemaWords maps each database of bench (lower-case id) to the base
// forms of the words of its table and column names.
func schemaWords(lx *vocab.Lexicon, bench *benchload.Bench) map[string]map[string]bool {
	out := make(map[string]map[string]bool, len(bench.DBs))
	for id, d := range bench.DBs {
		names := append(append([]string(nil), d.TableNames...), d.TableNamesNorm...)
		for _, c := range d.ColumnNames {
			if name, ok := c[1].(string); ok {
				names = append(names, name)
			}
		}
		out[strings.ToLower(id)] = mine.NameWords(lx.Lemma, names)
	}
	return out
}

// wordNetLexicon is the embedded lexicon without learned pairs and
// abbreviations: what the generator mines with.
func wordNetLexicon() (*vocab.Lexicon, error) {
	src := vocab.EmbeddedSources()
	src.Learned, src.Abbrev = nil, nil
	lx, err := vocab.Parse(src)
	if err != nil {
		return nil, fmt.Errorf("load the WordNet lexicon: %w", err)
	}
	return lx, nil
}

// pairsLexicon is the embedded lexicon with its learned pairs replaced by
// pairs.
func pairsLexicon(pairs []mine.Pair) (*vocab.Lexicon, error) {
	var b bytes.Buffer
	if err := mine.WriteTSV(&b, pairs); err != nil {
		return nil, err
	}
	src := vocab.EmbeddedSources()
	src.Learned = &b
	lx, err := vocab.Parse(src)
	if err != nil {
		return nil, fmt.Errorf("load a fold's lexicon: %w", err)
	}
	return lx, nil
}

// readSynQuestions reads the questions of files that carry a Spider
// original (spider_question: Spider-Syn's format); files without any
// contribute nothing.
func readSynQuestions(files []string) ([]mine.Question, error) {
	var out []mine.Question
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("read training questions: %w", err)
		}
		var qs []mine.Question
		if err := json.Unmarshal(raw, &qs); err != nil {
			return nil, fmt.Errorf("decode %s: %w", f, err)
		}
		for _, q := range qs {
			if q.Original != "" {
				out = append(out, q)
			}
		}
	}
	return out, nil
}

// minedQuestions are the Spider-Syn questions of files outside the held
// databases: what the folds' pairs are mined from.
func minedQuestions(files []string, held map[string]bool) ([]mine.Question, error) {
	all, err := readSynQuestions(files)
	if err != nil {
		return nil, err
	}
	var qs []mine.Question
	for _, q := range all {
		if !held[strings.ToLower(q.DBID)] {
			qs = append(qs, q)
		}
	}
	if len(qs) == 0 {
		return nil, fmt.Errorf("learned pairs in folds: no question of the extra question files carries spider_question (Spider-Syn's format)")
	}
	return qs, nil
}

// foldRetrievers builds one retriever per fold of the training databases
// ids, each with learned pairs mined from the questions qs of the other
// folds' databases. It maps each training database (lower-case) to its
// fold's retriever.
func foldRetrievers(pool *pgxpool.Pool, emb retriever.Embedder, qs []mine.Question, ids []string, k int, strict *benchload.Bench, log *slog.Logger) (map[string]*retriever.Retriever, error) {
	wn, err := wordNetLexicon()
	if err != nil {
		return nil, err
	}
	folds := learnedFolds(ids, k)
	var words map[string]map[string]bool
	if strict != nil {
		words = schemaWords(wn, strict)
	}
	pairs := foldPairs(wn, qs, folds, k, words)
	rs := make([]*retriever.Retriever, k)
	for f := range k {
		lx, err := pairsLexicon(pairs[f])
		if err != nil {
			return nil, err
		}
		rs[f] = retriever.NewForTrainingVocab(pool, emb, lx)
		log.Info("train-atr: learned pairs of a fold", "fold", f, "pairs", len(pairs[f]))
	}
	out := make(map[string]*retriever.Retriever, len(folds))
	for id, f := range folds {
		out[id] = rs[f]
	}
	return out, nil
}
