package atrtrain

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/catalog/benchload"
	"github.com/atriumdb/atrium/retriever/vocab"
	"github.com/atriumdb/atrium/retriever/vocab/mine"
	"github.com/atriumdb/atrium/test/testdb"
)

// TestLearnedFolds: every database in exactly one fold, folds balanced,
// and the assignment independent of the order (and case) the ids come in.
func TestLearnedFolds(t *testing.T) {
	ids := []string{"e", "B", "a", "d", "c", "b"}
	f := learnedFolds(ids, 2)
	require.Equal(t, map[string]int{"a": 0, "b": 1, "c": 0, "d": 1, "e": 0}, f)
	rev := slices.Clone(ids)
	slices.Reverse(rev)
	require.Equal(t, f, learnedFolds(rev, 2))
}

// expands reports whether lx bridges the question word syn to orig.
func expands(lx *vocab.Lexicon, syn, orig string) bool {
	for _, e := range lx.Expand(syn) {
		if e.Term == orig {
			return true
		}
	}
	return false
}

// TestFoldPairsLeaveOwnDatabaseOut: a substitution seen only in one
// database's questions is in the pairs (and the lexicon) of every fold but
// that database's, and mining is deterministic whatever the question order.
func TestFoldPairsLeaveOwnDatabaseOut(t *testing.T) {
	wn, err := wordNetLexicon()
	require.NoError(t, err)
	q := func(db, orig, syn string) mine.Question {
		return mine.Question{DBID: db, Original: orig, Question: syn}
	}
	// Made-up question words, so WordNet confirms nothing and only the
	// counts (twice each, the generator's threshold) keep a pair.
	qs := []mine.Question{
		q("a", "List the singers", "List the qqvocalists"),
		q("a", "How many singers are there?", "How many qqvocalists are there?"),
		q("b", "Show every stadium", "Show every zzarena"),
		q("b", "Which stadium is the largest?", "Which zzarena is the largest?"),
		q("c", "Name the teachers", "Name the xxtutors"),
		q("held", "Name the cities", "Name the yytowns"),
		q("held", "Count the cities", "Count the yytowns"),
	}
	folds := learnedFolds([]string{"a", "b", "c"}, 2) // a, c: fold 0; b: fold 1
	pairs := foldPairs(wn, qs, folds, 2, nil)
	has := func(ps []mine.Pair, syn, orig string) bool {
		for _, p := range ps {
			if p.Syn == syn && p.Orig == orig {
				return true
			}
		}
		return false
	}
	require.False(t, has(pairs[0], "qqvocalist", "singer"), "fold 0 holds database a")
	require.True(t, has(pairs[0], "zzarena", "stadium"))
	require.True(t, has(pairs[1], "qqvocalist", "singer"))
	require.False(t, has(pairs[1], "zzarena", "stadium"), "fold 1 holds database b")
	// A database in no fold (held out of training is filtered before; here
	// it stands for one mined everywhere) counts in every fold.
	require.True(t, has(pairs[0], "yytown", "city"))
	require.True(t, has(pairs[1], "yytown", "city"))
	// Seen once and not confirmed by WordNet: kept nowhere.
	require.False(t, has(pairs[1], "xxtutor", "teacher"))

	// No question's own database contributes to the pairs it is prepared
	// with: each fold's pairs are exactly those mined from the other folds.
	for f := range 2 {
		require.Equal(t, mine.Pairs(wn, qs, func(db string) bool { g, ok := folds[db]; return !ok || g != f }), pairs[f])
	}

	rev := slices.Clone(qs)
	slices.Reverse(rev)
	require.Equal(t, pairs, foldPairs(wn, rev, folds, 2, nil))

	// Strict: fold 0's databases (a, c) carry "city" in their names, so
	// the held database's yytown → city is dropped there too, although
	// mined from questions outside the fold.
	strict := foldPairs(wn, qs, folds, 2, map[string]map[string]bool{"a": {"singer": true}, "c": {"city": true}, "b": {"stadium": true}})
	require.False(t, has(strict[0], "yytown", "city"))
	require.True(t, has(strict[0], "zzarena", "stadium"))
	require.True(t, has(strict[1], "yytown", "city"))
	require.True(t, has(strict[1], "qqvocalist", "singer"))
	require.False(t, has(strict[1], "zzarena", "stadium"))

	lx0, err := pairsLexicon(pairs[0])
	require.NoError(t, err)
	require.False(t, expands(lx0, "qqvocalists", "singer"))
	require.True(t, expands(lx0, "zzarena", "stadium"))
	lx1, err := pairsLexicon(pairs[1])
	require.NoError(t, err)
	require.True(t, expands(lx1, "qqvocalists", "singer"))
	require.False(t, expands(lx1, "zzarena", "stadium"))
}

// TestLearnedPairsFoldsTraining: a short training run with learned pairs
// mined in folds from Spider-Syn's training questions.
func TestLearnedPairsFoldsTraining(t *testing.T) {
	dir := spiderTrainDir(t)
	syn := filepath.Join(dir, "..", "spider-syn", "train_spider.json")
	if _, err := os.Stat(syn); err != nil {
		t.Skipf("Spider-Syn not found: %s", syn)
	}
	ctx := context.Background()
	job := TrainJob{BenchDir: dir, ServerDSN: testdb.AdminDSN(), ExtraQuestions: []string{syn}, HoldOutEvery: 7,
		Train: TrainConfig{Epochs: 1, Limit: 80, LearnedPairsFolds: 5}}
	m, err := RunTraining(ctx, job)
	require.NoError(t, err)
	require.Contains(t, m.Training.Data, "learned pairs mined in 5 folds")
	require.Positive(t, m.Training.Windows)

	// Files without Spider originals cannot be mined.
	job.ExtraQuestions = nil
	_, err = RunTraining(ctx, job)
	require.ErrorContains(t, err, "spider_question")
}

// TestSchemaWords: base forms of a database's table and column names,
// original and normalised, keyed by lower-case id.
func TestSchemaWords(t *testing.T) {
	wn, err := wordNetLexicon()
	require.NoError(t, err)
	b := &benchload.Bench{DBs: map[string]*benchload.Database{
		"Concert_Singer": {TableNames: []string{"singer_in_concert"}, TableNamesNorm: []string{"singer in concert"},
			ColumnNames: [][2]any{{-1, "*"}, {0, "StadiumCapacities"}}},
	}}
	w := schemaWords(wn, b)["concert_singer"]
	for _, want := range []string{"singer", "concert", "stadium", "capacity"} {
		require.True(t, w[want], want)
	}
}
