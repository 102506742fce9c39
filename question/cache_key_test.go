package question

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/proxy/resultcache"
)

// TestCacheKeyTimeZone: a result cached in a UTC session is not served to
// an Asia/Tokyo session, whose timestamps read differently (finding 5).
func TestCacheKeyTimeZone(t *testing.T) {
	forEachCache(t, func(t *testing.T, store resultcache.Store) {
		e, role := newSecEnv(t, store, false)
		const q = "/* nl: events */"
		utc := e.connect(t, role)
		require.Nil(t, utc.ask(t, "SET TimeZone = 'UTC'").err)
		a := utc.ask(t, q)
		require.Nil(t, a.err)
		require.Equal(t, "2024-01-01 00:00:00+00", a.rows[0][0])
		a = utc.ask(t, q)
		require.True(t, a.cached(), "the UTC answer is cached")

		tokyo := e.connect(t, role)
		require.Nil(t, tokyo.ask(t, "SET TimeZone = 'Asia/Tokyo'").err)
		a = tokyo.ask(t, q)
		require.Nil(t, a.err)
		require.Equal(t, "2024-01-01 09:00:00+09", a.rows[0][0])
	})
}

// TestCacheKeyClientEncoding: rows cached for a UTF8 session are not sent
// to a LATIN1 session as UTF-8 bytes (finding 5).
func TestCacheKeyClientEncoding(t *testing.T) {
	forEachCache(t, func(t *testing.T, store resultcache.Store) {
		e, role := newSecEnv(t, store, false)
		const q = "/* nl: events */"
		u := e.connect(t, role)
		a := u.ask(t, q)
		require.Nil(t, a.err)
		require.Equal(t, "café opening", a.rows[0][1])
		require.True(t, u.ask(t, q).cached())

		l := e.connect(t, role)
		require.Nil(t, l.ask(t, "SET client_encoding = 'LATIN1'").err)
		a = l.ask(t, q)
		require.Nil(t, a.err)
		require.Equal(t, "caf\xe9 opening", a.rows[0][1], "LATIN1 bytes")
	})
}

// TestCacheKeyAtExecution: a prepared question described under
// search_path rt_a and executed after SET search_path = rt_b gets rt_b's
// rows, and they are not stored under rt_a's key: a later rt_a session
// still gets rt_a's rows (finding 5).
func TestCacheKeyAtExecution(t *testing.T) {
	forEachCache(t, func(t *testing.T, store resultcache.Store) {
		e, role := newSecEnv(t, store, false)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		const q = "/* nl: list the things */"
		c := e.connect(t, role)
		require.Nil(t, c.ask(t, "SET search_path = rt_a").err)
		pc := c.PgConn()
		_, err := pc.Prepare(ctx, "things", q, nil)
		require.NoError(t, err)
		run := func() [][][]byte {
			res := pc.ExecPrepared(ctx, "things", nil, nil, nil).Read()
			require.NoError(t, res.Err)
			return res.Rows
		}
		require.Equal(t, [][][]byte{{[]byte("apple from a")}}, run())
		require.Nil(t, c.ask(t, "SET search_path = rt_b").err)
		require.Equal(t, [][][]byte{{[]byte("banana from b")}}, run(), "not rt_a's cached rows")
		require.Equal(t, [][][]byte{{[]byte("banana from b")}}, run())

		other := e.connect(t, role)
		require.Nil(t, other.ask(t, "SET search_path = rt_a").err)
		a := other.ask(t, q)
		require.Nil(t, a.err)
		require.Equal(t, [][]string{{"apple from a"}}, a.rows, "rt_b's rows stored under rt_a's key")
	})
}
