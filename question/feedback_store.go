package question

import (
	"context"
	"fmt"

	"github.com/atriumdb/atrium/sqlgen"
)

// FeedbackDB is the FeedbackStore over the catalog database's
// atrium.feedback table (migration 0020). Writes are synchronous, unlike
// the query log's: the user is told the feedback's id, and that it landed.
// Safe for concurrent use when db is (a *pgxpool.Pool).
//
// The rows are written with the catalog connection's role, not the
// client's (clients need no privilege on the atrium schema), and outside
// the client's transaction: feedback given inside a transaction block
// stays recorded when the client rolls back.
type FeedbackDB struct {
	db sqlgen.RowQuerier
}

var _ FeedbackStore = (*FeedbackDB)(nil)

// NewFeedbackDB returns a FeedbackStore writing through db.
func NewFeedbackDB(db sqlgen.RowQuerier) *FeedbackDB { return &FeedbackDB{db: db} }

// RecordFeedback implements FeedbackStore. A wrong verdict moves
// atrium.catalog_state.learning_version (a trigger), which every cache key
// includes.
func (f *FeedbackDB) RecordFeedback(ctx context.Context, r FeedbackRecord) (int64, error) {
	tables := r.Tables
	if tables == nil {
		tables = []string{}
	}
	var id int64
	err := f.db.QueryRow(ctx, `INSERT INTO atrium.feedback
  (request_id, database_name, role_name, application_name, question, sql, tables, verdict, hint, corrected_sql, candidate)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id`,
		r.RequestID, r.Database, r.Role, r.ApplicationName, r.Question, nullable(r.SQL), tables,
		string(r.Verdict), nullable(r.Hint), nullable(r.CorrectedSQL), r.Candidate).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("insert into atrium.feedback: %w", err)
	}
	return id, nil
}

// PromoteFeedback implements FeedbackStore with atrium.promote_feedback,
// the function DBAs call themselves; the catalog connection's role needs
// INSERT on atrium.examples.
func (f *FeedbackDB) PromoteFeedback(ctx context.Context, id int64) (int64, error) {
	var ex int64
	if err := f.db.QueryRow(ctx, "SELECT atrium.promote_feedback($1)", id).Scan(&ex); err != nil {
		return 0, fmt.Errorf("atrium.promote_feedback(%d): %w", id, err)
	}
	return ex, nil
}

// nullable maps "" to SQL NULL.
// DisableExamples implements FeedbackStore: the examples promoted from
// feedback on the judged question (requestID), and the example whose SQL
// answered it (exampleID, 0: none), stop being used. A curator's "wrong"
// must not leave an example serving the very answer it contradicts.
func (f *FeedbackDB) DisableExamples(ctx context.Context, requestID string, exampleID int64) ([]int64, error) {
	var ids []int64
	err := f.db.QueryRow(ctx, `WITH d AS (
  UPDATE atrium.examples SET enabled = false
  WHERE enabled AND (id = $2 OR feedback_id IN (SELECT id FROM atrium.feedback WHERE request_id = $1))
  RETURNING id)
SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM d`, requestID, exampleID).Scan(&ids)
	if err != nil {
		return nil, fmt.Errorf("disable the examples behind a wrong answer: %w", err)
	}
	return ids, nil
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
