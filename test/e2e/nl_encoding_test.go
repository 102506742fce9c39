package e2e

import (
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/test/llmfake"
)

// A LATIN1 client's question reaches the pipeline as UTF-8, and the SQL
// generated for it reaches the client's session in LATIN1, so a literal
// means what the question meant (issue 9, finding 8). Before, the question
// failed with 22021.
func TestNLLatin1Client(t *testing.T) {
	e := startNL(t, nlOpts{cfg: fastCfg()})
	e.llm.SetRules(append([]llmfake.Rule{
		{Question: "café customers", SQL: "SELECT name, 'café' AS place FROM shop.customers WHERE name <> 'Zoë' ORDER BY id"},
	}, nlRules()...)...)
	r := dialRaw(t, e.px.addr)
	r.startup(pgproto3.ProtocolVersion30, dbParams(t, e.db, "client_encoding", "LATIN1"))
	// \xe9 is é in LATIN1 (in UTF-8 it would be an invalid byte).
	r.send(&pgproto3.Query{String: "/* nl: caf\xe9 customers */"})
	var rows [][]string
	for {
		m, err := r.recv()
		require.NoError(t, err)
		switch m := m.(type) {
		case *pgproto3.ErrorResponse:
			t.Fatalf("question failed: %s %s", m.Code, m.Message)
		case *pgproto3.DataRow:
			rows = append(rows, []string{string(m.Values[0]), string(m.Values[1])})
		}
		if _, ok := m.(*pgproto3.ReadyForQuery); ok {
			break
		}
	}
	require.Equal(t, [][]string{{"Ann", "caf\xe9"}, {"Bob", "caf\xe9"}, {"Cy", "caf\xe9"}}, rows)
	reqs := e.llm.Requests()
	require.NotEmpty(t, reqs)
	require.Equal(t, "café customers", reqs[len(reqs)-1].Question)
}
