package question

import (
	"sync"
	"time"

	"github.com/atriumdb/atrium/sqlgen"
)

// Turn is what a session remembers of its last finished question: what
// feedback judges and what a follow-up continues.
type Turn struct {
	// RequestID joins the turn to its atrium.query_log row.
	RequestID string
	// Kind is sqlgen.KindNL, KindNLSQL or KindRetrieve.
	Kind     string
	Question string
	// SQL is the validated SQL that answered (or was returned); "" when
	// none was produced.
	SQL string
	// Tables are the chosen tables the asking role may read,
	// schema-qualified, best first.
	Tables []string
	// CacheKey is the result cache key of the answer ("" when not cached).
	CacheKey string
	// ExampleID is the curated example whose SQL answered (0: none).
	ExampleID int64
	// SQLState is the error the client saw; "" when the question was
	// answered.
	SQLState string
	// Role and Database are the session's current_user and database when
	// it was asked.
	Role, Database string
	At             time.Time
}

// OK reports whether the turn was answered without error.
func (t Turn) OK() bool { return t.SQLState == "" }

// turnFromRecord takes the turn from a finished question's record.
func turnFromRecord(r sqlgen.QuestionRecord) Turn {
	return Turn{
		RequestID: r.RequestID, Kind: r.Kind, Question: r.Question, SQL: r.SQL,
		Tables: append([]string(nil), r.Tables...), CacheKey: r.CacheKey, ExampleID: r.ExampleID, SQLState: r.SQLState,
		Role: r.Role, Database: r.Database, At: r.Start,
	}
}

// sessions holds each live session's last turn, keyed by
// proxy.SessionInfo.ID, and its last nl or nl-sql turn: the conversation a
// follow-up continues. RETRIEVE is a look at what a question would use, so
// it does not move the conversation ("RETRIEVE and only Aruba?" followed by
// the same words as nl must still continue the question before), while
// feedback judges whatever the user saw last. Entries are dropped when the
// proxy reports the session's end (Handler.SessionEnded), so memory is
// bounded by the number of open connections. Safe for concurrent use.
type sessions struct {
	mu   sync.Mutex
	last map[uint64]Turn
	conv map[uint64]Turn
}

func newSessions() *sessions { return &sessions{last: map[uint64]Turn{}, conv: map[uint64]Turn{}} }

func (s *sessions) set(id uint64, t Turn) {
	s.mu.Lock()
	s.last[id] = t
	if t.Kind != sqlgen.KindRetrieve {
		s.conv[id] = t
	}
	s.mu.Unlock()
}

// get returns the session's last turn of any kind.
func (s *sessions) get(id uint64) (Turn, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.last[id]
	return t, ok
}

// conversation returns the session's last nl or nl-sql turn.
func (s *sessions) conversation(id uint64) (Turn, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.conv[id]
	return t, ok
}

// forget drops the session's memory (its end, or a user starting fresh).
func (s *sessions) forget(id uint64) {
	s.mu.Lock()
	delete(s.last, id)
	delete(s.conv, id)
	s.mu.Unlock()
}

func (s *sessions) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.last)
}
