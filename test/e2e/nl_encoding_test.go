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

// Ordinary SQL from a client whose encoding Atrium cannot convert (EUC_TW is
// not in its table) still passes through untouched: only a question in such
// an encoding is refused, with 0A000.
func TestUnconvertibleEncodingPassesOrdinarySQL(t *testing.T) {
	e := startNL(t, nlOpts{cfg: fastCfg()})
	r := dialRaw(t, e.px.addr)
	r.startup(pgproto3.ProtocolVersion30, dbParams(t, e.db, "client_encoding", "EUC_TW"))
	// \xa4\xa4 is 中 in EUC_TW.
	r.send(&pgproto3.Query{String: "SELECT '\xa4\xa4' AS c"})
	var got []string
	for {
		m, err := r.recv()
		require.NoError(t, err)
		if er, ok := m.(*pgproto3.ErrorResponse); ok {
			t.Fatalf("ordinary SQL refused: %s %s", er.Code, er.Message)
		}
		if d, ok := m.(*pgproto3.DataRow); ok {
			got = append(got, string(d.Values[0]))
		}
		if _, ok := m.(*pgproto3.ReadyForQuery); ok {
			break
		}
	}
	require.Equal(t, []string{"\xa4\xa4"}, got)

	r.send(&pgproto3.Query{String: "/* nl: \xa4\xa4 customers */"})
	var code string
	for {
		m, err := r.recv()
		require.NoError(t, err)
		if er, ok := m.(*pgproto3.ErrorResponse); ok {
			code = er.Code
		}
		if _, ok := m.(*pgproto3.ReadyForQuery); ok {
			break
		}
	}
	require.Equal(t, "0A000", code)
}
