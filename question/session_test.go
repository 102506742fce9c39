package question

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/proxy"
	"github.com/atriumdb/atrium/sqlgen"
)

// TestSessionsLastTurn: each session keeps only its last turn, sessions do
// not see each other's, and forget (the session's end) drops it.
func TestSessionsLastTurn(t *testing.T) {
	s := newSessions()
	_, ok := s.get(1)
	require.False(t, ok)
	s.set(1, Turn{RequestID: "a", Question: "first"})
	s.set(1, Turn{RequestID: "b", Question: "second"})
	s.set(2, Turn{RequestID: "c", Question: "other session"})
	got, ok := s.get(1)
	require.True(t, ok)
	require.Equal(t, "b", got.RequestID, "only the last turn is kept")
	got, _ = s.get(2)
	require.Equal(t, "c", got.RequestID)
	require.Equal(t, 2, s.len())
	s.forget(1)
	_, ok = s.get(1)
	require.False(t, ok)
	require.Equal(t, 1, s.len())
	s.forget(1) // twice is harmless
	s.forget(2)
	require.Zero(t, s.len())
}

// TestRetrieveDoesNotMoveTheConversation: a RETRIEVE is the last turn
// (feedback judges it) but the conversation a follow-up continues stays
// at the last nl question.
func TestRetrieveDoesNotMoveTheConversation(t *testing.T) {
	s := newSessions()
	s.set(1, Turn{RequestID: "q", Kind: sqlgen.KindNL, Question: "How many orders per country?"})
	s.set(1, Turn{RequestID: "r", Kind: sqlgen.KindRetrieve, Question: "and only Aruba?"})
	last, _ := s.get(1)
	require.Equal(t, "r", last.RequestID)
	conv, ok := s.conversation(1)
	require.True(t, ok)
	require.Equal(t, "q", conv.RequestID)
	s.set(1, Turn{RequestID: "s", Kind: sqlgen.KindNLSQL, Question: "and only Aruba?"})
	conv, _ = s.conversation(1)
	require.Equal(t, "s", conv.RequestID)
	s.forget(1)
	_, ok = s.conversation(1)
	require.False(t, ok)
}

// TestSessionsConcurrent: many sessions set, get and forget at once
// (run with -race).
func TestSessionsConcurrent(t *testing.T) {
	s := newSessions()
	var wg sync.WaitGroup
	for i := uint64(1); i <= 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				s.set(i, Turn{Question: "q"})
				if _, ok := s.get(i); !ok {
					t.Errorf("session %d lost its turn", i)
				}
			}
			s.forget(i)
		}()
	}
	wg.Wait()
	require.Zero(t, s.len())
}

// TestTurnFromRecord: a turn copies what feedback and follow-ups need from
// a finished question's record, and its tables are its own copy.
func TestTurnFromRecord(t *testing.T) {
	start := time.Now()
	r := sqlgen.QuestionRecord{
		RequestID: "r1", Start: start, Session: proxy.SessionInfo{ID: 7}, Kind: sqlgen.KindNL,
		Question: "customers in Aruba", Role: "alice", Database: "shopdb", Tables: []string{"shop.customers"},
		SQL: "SELECT 1", SQLState: "", CacheKey: "k1",
	}
	tn := turnFromRecord(r)
	require.Equal(t, Turn{RequestID: "r1", Kind: sqlgen.KindNL, Question: "customers in Aruba", SQL: "SELECT 1",
		Tables: []string{"shop.customers"}, CacheKey: "k1", Role: "alice", Database: "shopdb", At: start}, tn)
	require.True(t, tn.OK())
	r.Tables[0] = "changed"
	require.Equal(t, "shop.customers", tn.Tables[0], "the turn owns its tables")
	r.SQLState = "42P01"
	require.False(t, turnFromRecord(r).OK())
}

// TestHandlerSessionEnded: the Handler forgets a session's turn when the
// proxy reports its end.
func TestHandlerSessionEnded(t *testing.T) {
	h := &Handler{turns: newSessions()}
	h.turns.set(3, Turn{RequestID: "x"})
	_, ok := h.LastTurn(3)
	require.True(t, ok)
	h.SessionEnded(3)
	_, ok = h.LastTurn(3)
	require.False(t, ok)
}
