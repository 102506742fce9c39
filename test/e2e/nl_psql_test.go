package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestNLPsql asks questions with the real psql binary, as a user at a
// terminal would: psql sends the block comment as the statement.
func TestNLPsql(t *testing.T) {
	e := startNL(t, nlOpts{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := psqlCmd(ctx, e.dsn(t),
		"-c", "/* nl: How many orders per country? */",
		"-c", "/* nl: drop the orders */",
		"-c", "SELECT 'still here' AS status",
		"-c", "/* nl-sql: customer names */",
	).CombinedOutput()
	require.NoError(t, err, "%s", out)
	s := string(out)
	t.Log(s)
	require.Contains(t, s, "NOTICE:  atrium: tables: shop.")
	require.Contains(t, s, "SQL: "+sqlOrdersPerCountry)
	require.Regexp(t, `(?m)^ country \| orders \| revenue\s*$`, s)
	require.Regexp(t, `(?m)^ Aruba\s+\|\s+20 \|\s+3200\.00\s*$`, s)
	require.Regexp(t, `(?m)^ Chile\s+\|\s+10 \|\s+1450\.00\s*$`, s)
	require.Contains(t, s, "(2 rows)")
	require.Contains(t, s, "ERROR:  could not generate valid SQL in 3 attempts: generated SQL is not a single read-only SELECT")
	require.Contains(t, s, "still here")
	require.Contains(t, s, sqlCustomerNames)

	// A psql script: psql sends each statement on its own, so the question
	// runs inside the script's transaction and sees its uncommitted row.
	cmd := psqlCmd(ctx, e.dsn(t), "-v", "ON_ERROR_STOP=1", "-At", "-f", "-")
	cmd.Stdin = strings.NewReader("BEGIN;\nINSERT INTO shop.customers VALUES (9, 'Zed', 'Peru');\n/* nl: customer names */;\nROLLBACK;\n/* nl: customer names */\n;\n")
	out, err = cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	s = string(out)
	t.Log(s)
	require.Contains(t, s, "Cy\nZed\n")
	require.Equal(t, 2, strings.Count(s, "Ann\n"))
	require.Equal(t, 1, strings.Count(s, "Zed"))
}
