package evaluate

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/atriumdb/atrium/catalog/benchload"
	"github.com/atriumdb/atrium/retriever"
)

// MethodNoExamples is the default pipeline without the learning index, on
// the same questions, in an --examples split run.
const MethodNoExamples = MethodDefault + "-no-examples"

// ExampleSplit is the --examples split part of a report: how many
// questions became examples, and both pipelines' quality by how close each
// evaluated question is to its nearest example.
type ExampleSplit struct {
	Examples int `json:"examples"`
	// Buckets split the evaluated questions by the similarity of their
	// nearest example (Result.NearestExample).
	Buckets []SimilarityBucket `json:"buckets"`
	// Grid is the example-parameter search (--examples-grid), when run.
	Grid []GridPoint `json:"grid,omitempty"`
}

// SimilarityBucket is one similarity range [Min, Max).
type SimilarityBucket struct {
	Min       float64      `json:"min"`
	Max       float64      `json:"max"`
	Questions int          `json:"questions"`
	With      QualityStats `json:"with_examples"`
	Without   QualityStats `json:"without_examples"`
}

// QualityStats are the quality means of MethodStats.
type QualityStats struct {
	Precision      float64 `json:"precision"`
	Recall         float64 `json:"recall"`
	CompleteRecall float64 `json:"complete_recall"`
	F1             float64 `json:"f1"`
	AvgTables      float64 `json:"avg_tables"`
}

// GridPoint is the default pipeline's quality with one setting of the
// example parameters.
type GridPoint struct {
	Weight      float64      `json:"weight"`
	Gate        float64      `json:"gate"`
	Penalty     float64      `json:"penalty"`
	Neighbours  int          `json:"neighbours,omitempty"`
	Spread      float64      `json:"spread,omitempty"`
	PenaltyGate float64      `json:"penalty_gate,omitempty"`
	Stats       QualityStats `json:"stats"`
}

func quality(a *accumulator) QualityStats {
	s := a.stats()
	return QualityStats{Precision: s.Precision, Recall: s.Recall, CompleteRecall: s.CompleteRecall, F1: s.F1, AvgTables: s.AvgTables}
}

// similarityEdges are the bucket bounds: below 0.3 nothing is alike,
// below the default gate no example lends its tables, above 0.6 the
// example is usually a paraphrase.
var similarityEdges = []float64{0, 0.3, retriever.DefaultExampleGate, 0.6, 1.0000001}

// SplitExamples splits questions per database, in file order: those at
// even positions within their database become examples, the others are
// evaluated. Questions without gold SQL are always evaluated.
func SplitExamples(qs []benchload.Question) (examples, evaluated []benchload.Question) {
	pos := map[string]int{}
	for _, q := range qs {
		if q.Unanswerable() {
			evaluated = append(evaluated, q)
			continue
		}
		db := strings.ToLower(q.DBID)
		if pos[db]%2 == 0 {
			examples = append(examples, q)
		} else {
			evaluated = append(evaluated, q)
		}
		pos[db]++
	}
	return examples, evaluated
}

// insertExamples stores the examples in atrium.examples with their gold
// SQL, as a DBA would: the retriever then loads them like any others. The
// tables column is filled with the gold tables, as `atrium examples add`
// fills it from the SQL as the adding role sees it: Spider's SQL names
// tables unqualified, and in the pooled catalog (one schema per database)
// a name like "singer" is in several schemas, which only the question's
// database tells apart.
func insertExamples(ctx context.Context, pool *pgxpool.Pool, bench *benchload.Bench, exs []benchload.Question) error {
	for i := range exs {
		q := &exs[i]
		gold, err := bench.GoldTables(q)
		if err != nil {
			return fmt.Errorf("eval: example %q: %w", q.Question, err)
		}
		if _, err := pool.Exec(ctx, `INSERT INTO atrium.examples (question, sql, tables, source, note) VALUES ($1, $2, $3, 'import', 'atrium eval --examples split')`,
			q.Question, q.GoldSQL(), gold); err != nil {
			return fmt.Errorf("eval: insert example: %w", err)
		}
	}
	return nil
}

// splitAcc accumulates the similarity buckets.
type splitAcc struct {
	with, without []*accumulator
	n             []int
	grid          []*accumulator
}

func newSplitAcc(gridN int) *splitAcc {
	s := &splitAcc{}
	for range similarityEdges[1:] {
		s.with = append(s.with, &accumulator{})
		s.without = append(s.without, &accumulator{})
		s.n = append(s.n, 0)
	}
	for range gridN {
		s.grid = append(s.grid, &accumulator{})
	}
	return s
}

func (s *splitAcc) add(sim float64, kind string, with, without, gold []string) {
	for b := range s.with {
		if sim >= similarityEdges[b] && sim < similarityEdges[b+1] {
			s.n[b]++
			s.with[b].add(kind, with, gold, 0)
			s.without[b].add(kind, without, gold, 0)
			return
		}
	}
}

func (s *splitAcc) report(examples int, grid []retriever.ExampleParams) *ExampleSplit {
	out := &ExampleSplit{Examples: examples}
	for b := range s.with {
		out.Buckets = append(out.Buckets, SimilarityBucket{Min: similarityEdges[b], Max: min(similarityEdges[b+1], 1), Questions: s.n[b],
			With: quality(s.with[b]), Without: quality(s.without[b])})
	}
	for i, g := range grid {
		out.Grid = append(out.Grid, GridPoint{Weight: g.Weight, Gate: g.Gate, Penalty: g.Penalty, Neighbours: g.Neighbours, Spread: g.Spread, PenaltyGate: g.PenaltyGate, Stats: quality(s.grid[i])})
	}
	return out
}

func writeSplit(w io.Writer, sp *ExampleSplit) {
	fmt.Fprintf(w, "%d questions became examples; by nearest-example similarity (with / without examples):\n", sp.Examples)
	fmt.Fprintf(w, "%-11s %9s %17s %17s %17s %17s\n", "similarity", "questions", "precision", "recall", "complete", "f1")
	for _, b := range sp.Buckets {
		fmt.Fprintf(w, "%4.2f-%-6.2f %9d %8.3f / %6.3f %8.3f / %6.3f %8.3f / %6.3f %8.3f / %6.3f\n", b.Min, b.Max, b.Questions,
			b.With.Precision, b.Without.Precision, b.With.Recall, b.Without.Recall, b.With.CompleteRecall, b.Without.CompleteRecall, b.With.F1, b.Without.F1)
	}
	if len(sp.Grid) > 0 {
		fmt.Fprintf(w, "example parameter grid (default pipeline):\n%7s %5s %7s %4s %6s %9s %7s %8s %6s %10s\n", "weight", "gate", "penalty", "k", "spread", "precision", "recall", "complete", "f1", "avg_tables")
		for _, g := range sp.Grid {
			fmt.Fprintf(w, "%7.2f %5.2f %7.2f %4d %6.2f %9.3f %7.3f %8.3f %6.3f %10.2f\n", g.Weight, g.Gate, g.Penalty, g.Neighbours, g.Spread, g.Stats.Precision, g.Stats.Recall, g.Stats.CompleteRecall, g.Stats.F1, g.Stats.AvgTables)
		}
	}
}
