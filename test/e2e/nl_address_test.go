package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/test/llmfake"
)

// TestNLEmailAddress: a question that pastes an e-mail address finds the
// row's table through the value index, which holds the address as one
// lexeme, and the prompt lists the stored value for the LLM to compare
// with. hr's employees share the customers' first names, which split
// addresses used to match.
func TestNLEmailAddress(t *testing.T) {
	fixture := hrFixture + `
ALTER TABLE shop.customers ADD COLUMN email text;
UPDATE shop.customers SET email = lower(name) || '.' || id || '@mail.example';
UPDATE hr.employees SET full_name = 'Ann' WHERE id = 1;
`
	e := startNL(t, nlOpts{extraFixture: fixture, extraSchemas: []string{"hr"}})
	e.llm.SetRules(append(nlRules(), llmfake.Rule{Question: "placed",
		SQL: "SELECT count(*) FROM shop.orders o JOIN shop.customers c ON c.id = o.customer_id WHERE c.email = 'ann.1@mail.example'"})...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn := e.connect(t)

	const question = "How many orders has Ann.1@mail.example placed?"
	reasons := retrieveChosen(ctx, t, conn, question)
	t.Logf("chosen: %v", reasons)
	require.Contains(t, reasons["shop.customers"], "value", "%v", reasons)
	require.Contains(t, reasons, "shop.orders")
	for name := range reasons {
		require.False(t, strings.HasPrefix(name, "hr."), "nothing from hr: %v", reasons)
	}

	var n int64
	require.NoError(t, conn.QueryRow(ctx, "/* nl: "+question+" */").Scan(&n))
	require.EqualValues(t, 10, n)
	reqs := e.llm.Requests()
	require.Len(t, reqs, 1)
	require.Contains(t, reqs[0].Messages[1].Content, "--   shop.customers.email = 'ann.1@mail.example'\n")
}
