package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/test/llmfake"
)

// sqlArubaOrders is the fake LLM's answer to the follow-up.
const sqlArubaOrders = "SELECT count(*) AS orders FROM shop.orders o JOIN shop.customers c ON c.id = o.customer_id WHERE c.country = 'Aruba'"

// TestNLFollowUpPsql is a scripted psql session: a question, a follow-up
// (whose prompt holds the previous turn), a fresh start with nl-new and
// one with DISCARD ALL (whose questions' prompts do not).
func TestNLFollowUpPsql(t *testing.T) {
	e := startNL(t, nlOpts{})
	e.llm.SetRules(append(nlRules(), llmfake.Rule{Question: "orders of customers from Aruba", SQL: sqlArubaOrders})...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := psqlCmd(ctx, e.dsn(t), "-v", "ON_ERROR_STOP=1", "-f", "-")
	cmd.Stdin = strings.NewReader(`/* nl: How many orders per country? */;
/* nl: and only the orders of customers from Aruba? */;
/* nl-new: how many orders of customers from Aruba */;
/* nl: How many orders per country? */;
DISCARD ALL;
/* nl: and only the orders of customers from Aruba */;
`)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	s := string(out)
	t.Log(s)
	require.Contains(t, s, "NOTICE:  atrium: tables: shop.")
	require.Contains(t, s, "Follow-up of: How many orders per country?")
	require.Equal(t, 1, strings.Count(s, "Follow-up of:"), "only the follow-up continued a turn")
	require.Regexp(t, `(?m)^\s+20\s*$`, s, "Aruba's orders")

	reqs := e.llm.Requests()
	require.Len(t, reqs, 4, "orders per country, its follow-up, nl-new, the question after DISCARD ALL (the second orders per country is cached)")
	follow := reqs[1].Messages[1].Content
	require.Contains(t, follow, "-- Previous question in this conversation:\n--   How many orders per country?\n-- Its SQL:\n--   "+sqlOrdersPerCountry+"\n")
	require.Contains(t, follow, "\nQuestion: and only the orders of customers from Aruba?\n")
	for _, i := range []int{0, 2, 3} {
		require.NotContains(t, reqs[i].Messages[1].Content, "Previous question", "request %d", i)
	}
}
