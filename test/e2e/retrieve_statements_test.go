package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRetrieveOneStatement: a semicolon ends a question as it ends any
// statement. One simple Query holding a second statement after a RETRIEVE,
// or a second comment question, is refused with 0A000 (before, the rest was
// read as part of the RETRIEVE's question, and a second comment question
// was silently dropped); psql, which splits a line at its semicolons
// itself, gets both answered.
func TestRetrieveOneStatement(t *testing.T) {
	e := startNL(t, nlOpts{noLLM: true})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	c := e.connect(t)
	// pgx sends a statement without arguments as one simple Query.
	_, err := c.Exec(ctx, "RETRIEVE customers and their country; RETRIEVE orders")
	pe := requireSQLState(t, err, "0A000")
	require.Contains(t, pe.Message, "only statement")
	requireAlive(t, c)
	// Two comment questions in one query string: refused alike, not the
	// first answered and the second dropped.
	_, err = c.Exec(ctx, "/* nl: customers by country */; /* nl: order totals */")
	pe = requireSQLState(t, err, "0A000")
	require.Contains(t, pe.Message, "only statement")
	requireAlive(t, c)

	// Quoted, the semicolon is the question's own.
	rows, err := c.Query(ctx, "RETRIEVE 'customers; and their country';")
	require.NoError(t, err)
	n := 0
	for rows.Next() {
		n++
	}
	require.NoError(t, rows.Err())
	require.NotZero(t, n)

	cmd := psqlCmd(ctx, e.dsn(t), "-v", "ON_ERROR_STOP=1", "-At", "-f", "-")
	cmd.Stdin = strings.NewReader("RETRIEVE customers and their country; RETRIEVE order totals;\n")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	// Two result sets, each ranking its own question's table first.
	require.Contains(t, string(out), "1|shop|customers|", "%s", out)
	require.Contains(t, string(out), "1|shop|orders|", "%s", out)
}
