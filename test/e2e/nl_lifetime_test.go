package e2e

import (
	"context"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"
)

// A question does not outlive its client (issue 9, finding 6): a client that
// vanishes mid-question (a killed psql, a crashed BI tool, a dropped network:
// no CancelRequest, just a closed socket) takes the LLM call, the question's
// read-only transaction and its running query with it, long before their own
// timeouts (a minute here). pgx would send a CancelRequest and hide the bug,
// so the clients here are a raw socket and a psql process killed with
// SIGKILL.
func TestNLClientVanishes(t *testing.T) {
	e := startNL(t, nlOpts{llmTimeout: time.Minute})
	ctx := context.Background()

	// backendGone waits until the upstream backend has ended: no pg_sleep,
	// no idle-in-transaction, nothing left of the session upstream. The
	// deadline is generous; what matters is "not at the statement
	// timeout".
	backendGone := func(t *testing.T, pid int) {
		t.Helper()
		require.Eventually(t, func() bool {
			var n int
			require.NoError(t, e.admin.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE pid = $1", pid).Scan(&n))
			return n == 0
		}, 15*time.Second, 20*time.Millisecond, "upstream backend %d still there", pid)
	}
	// waitFor polls the admin connection until pid is in the given state
	// running a query like the pattern.
	waitFor := func(t *testing.T, pid int, state, like string) {
		t.Helper()
		require.Eventually(t, func() bool {
			var n int
			require.NoError(t, e.admin.QueryRow(ctx,
				"SELECT count(*) FROM pg_stat_activity WHERE pid = $1 AND state = $2 AND query LIKE $3", pid, state, like).Scan(&n))
			return n == 1
		}, 60*time.Second, 20*time.Millisecond, "backend %d never was %s with %s", pid, state, like)
	}

	rawSession := func(t *testing.T) (*rawClient, int) {
		r := dialRaw(t, e.px.addr)
		r.startup(pgproto3.ProtocolVersion30, dbParams(t, e.db))
		r.send(&pgproto3.Query{String: "SELECT pg_backend_pid()"})
		var pid int
		for {
			m, err := r.recv()
			require.NoError(t, err)
			if d, ok := m.(*pgproto3.DataRow); ok {
				pid, err = strconv.Atoi(string(d.Values[0]))
				require.NoError(t, err)
			}
			if _, ok := m.(*pgproto3.ReadyForQuery); ok {
				return r, pid
			}
		}
	}

	t.Run("raw socket closed while the query runs", func(t *testing.T) {
		r, pid := rawSession(t)
		r.send(&pgproto3.Query{String: "/* nl: slow customers */"})
		waitFor(t, pid, "active", "%pg_sleep%")
		require.NoError(t, r.nc.Close())
		backendGone(t, pid)
	})

	t.Run("raw socket closed while the LLM answers", func(t *testing.T) {
		r, pid := rawSession(t)
		before, cancelled := e.llm.Calls(), e.llm.Cancelled()
		r.send(&pgproto3.Query{String: "/* nl: sleepy llm about customers */"})
		require.Eventually(t, func() bool { return e.llm.Calls() > before }, 60*time.Second, 20*time.Millisecond)
		// The question holds its BEGIN READ ONLY open while the LLM works.
		waitFor(t, pid, "idle in transaction", "%")
		require.NoError(t, r.nc.Close())
		require.Eventually(t, func() bool { return e.llm.Cancelled() > cancelled }, 15*time.Second, 20*time.Millisecond,
			"the LLM request was not cancelled")
		backendGone(t, pid)
	})

	t.Run("extended protocol, raw socket closed", func(t *testing.T) {
		r, pid := rawSession(t)
		r.send(&pgproto3.Parse{Query: "/* nl: slow customers */"}, &pgproto3.Bind{}, &pgproto3.Execute{MaxRows: 5}, &pgproto3.Sync{})
		waitFor(t, pid, "active", "%pg_sleep%")
		require.NoError(t, r.nc.Close())
		backendGone(t, pid)
	})

	t.Run("psql killed", func(t *testing.T) {
		if _, err := exec.LookPath("psql"); err != nil {
			t.Skip("psql not installed")
		}
		app := "atrium_killed_psql_" + strconv.FormatInt(time.Now().UnixNano(), 36)
		cmd := psqlCmd(ctx, e.dsn(t, "application_name", app), "-c", "/* nl: slow customers */")
		require.NoError(t, cmd.Start())
		var pid int
		require.Eventually(t, func() bool {
			err := e.admin.QueryRow(ctx,
				"SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND state = 'active' AND query LIKE '%pg_sleep%'", app).Scan(&pid)
			return err == nil
		}, 60*time.Second, 20*time.Millisecond, "psql's question never ran upstream")
		require.NoError(t, cmd.Process.Kill())
		_ = cmd.Wait()
		backendGone(t, pid)
	})
}
