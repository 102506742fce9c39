package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/test/llmfake"
)

// hrFixture is a second topic beside the shop, for a question that must
// not drag the shop's tables along.
const hrFixture = `
CREATE SCHEMA hr;
CREATE TABLE hr.departments (id bigint PRIMARY KEY, title text NOT NULL);
COMMENT ON TABLE hr.departments IS 'departments of the company';
CREATE TABLE hr.employees (id bigint PRIMARY KEY, full_name text NOT NULL, department_id bigint NOT NULL REFERENCES hr.departments, salary numeric(10,2) NOT NULL);
COMMENT ON TABLE hr.employees IS 'employees and their salaries';
INSERT INTO hr.departments VALUES (1, 'Engineering'), (2, 'Sales');
INSERT INTO hr.employees VALUES (1, 'Dana', 1, 5000), (2, 'Eli', 2, 4000), (3, 'Flo', 1, 6000);
`

const sqlSalaryPerDepartment = "SELECT d.title, avg(e.salary) AS average_salary FROM hr.employees e JOIN hr.departments d ON d.id = e.department_id GROUP BY d.title ORDER BY d.title"

// TestNLFollowUpRealRetrieval drives follow-ups through the proxy with the
// real retriever over a real catalog (only the LLM is a double): a
// follow-up's RETRIEVE keeps the previous question's tables (reason
// follow-up), its prompt holds the previous turn and those tables, and a
// question on another topic gets neither.
func TestNLFollowUpRealRetrieval(t *testing.T) {
	e := startNL(t, nlOpts{extraFixture: hrFixture, extraSchemas: []string{"hr"}})
	e.llm.SetRules(append(nlRules(),
		llmfake.Rule{Question: "orders of customers from Aruba", SQL: sqlArubaOrders},
		llmfake.Rule{Question: "average salary", SQL: sqlSalaryPerDepartment})...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn := e.connect(t)

	_, err := conn.Exec(ctx, "/* nl: How many orders per country? */")
	require.NoError(t, err)

	// RETRIEVE of a follow-up shows what the follow-up would get.
	reasons := retrieveChosen(ctx, t, conn, "and only the ones from Aruba?")
	t.Logf("chosen: %v", reasons)
	require.Contains(t, reasons, "shop.orders", "the previous question's tables stay: %v", reasons)
	require.Contains(t, reasons, "shop.customers", "%v", reasons)
	require.Contains(t, reasons["shop.orders"], "follow-up")
	for name := range reasons {
		require.False(t, strings.HasPrefix(name, "hr."), "a follow-up about the shop picks nothing from hr: %v", reasons)
	}

	var n int64
	require.NoError(t, conn.QueryRow(ctx, "/* nl: and only the orders of customers from Aruba? */").Scan(&n))
	require.EqualValues(t, 20, n)

	// A new topic: no previous turn in its prompt, none of the shop's tables.
	var title string
	var avg float64
	require.NoError(t, conn.QueryRow(ctx, "/* nl: What is the average salary in each department? */").Scan(&title, &avg))

	reqs := e.llm.Requests()
	require.Len(t, reqs, 3)
	follow := reqs[1].Messages[1].Content
	require.Contains(t, follow, "-- Previous question in this conversation:\n--   How many orders per country?\n")
	require.Contains(t, follow, "CREATE TABLE shop.orders")
	require.Contains(t, follow, "CREATE TABLE shop.customers")
	fresh := reqs[2].Messages[1].Content
	require.Contains(t, fresh, "CREATE TABLE hr.employees")
	require.NotContains(t, fresh, "Previous question")
	require.NotContains(t, fresh, "CREATE TABLE shop.", "another topic drags no shop table along")
}

// TestNLExampleAndGlossaryRealRetrieval: with the real retriever, a
// question equal to a curated example's (case and punctuation aside) runs
// the example's SQL with no LLM call, a close one gets the example as a
// few-shot pair, and a glossary term's tables come back from RETRIEVE with
// reason glossary.
func TestNLExampleAndGlossaryRealRetrieval(t *testing.T) {
	e := startNL(t, nlOpts{extraFixture: hrFixture, extraSchemas: []string{"hr"}})
	e.llm.SetRules(append(nlRules(), llmfake.Rule{Question: "payroll", SQL: sqlSalaryPerDepartment})...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := e.admin.Exec(ctx, `INSERT INTO atrium.examples (question, sql) VALUES
		('Which customers from Aruba spent the most?',
		 'SELECT c.name, sum(o.amount) AS spent FROM shop.customers c JOIN shop.orders o ON o.customer_id = c.id WHERE c.country = ''Aruba'' GROUP BY c.name ORDER BY spent DESC')`)
	require.NoError(t, err)
	_, err = e.admin.Exec(ctx, `INSERT INTO atrium.glossary (term, definition, tables) VALUES
		('payroll', 'What the company pays its employees: the sum of salaries.', '{hr.employees}')`)
	require.NoError(t, err)
	conn := e.connect(t)

	rows, err := conn.Query(ctx, "/* nl: which customers from aruba spent the most */")
	require.NoError(t, err)
	var names []string
	for rows.Next() {
		var name string
		var spent float64
		require.NoError(t, rows.Scan(&name, &spent))
		names = append(names, name)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []string{"Ann", "Cy"}, names)
	require.Empty(t, e.llm.Requests(), "an example's own question needs no LLM call")

	reasons := retrieveChosen(ctx, t, conn, "What is our monthly payroll?")
	require.Contains(t, reasons["hr.employees"], "glossary", "%v", reasons)

	var title string
	var avg float64
	require.NoError(t, conn.QueryRow(ctx, "/* nl-new: What is our payroll per department? */").Scan(&title, &avg))
	reqs := e.llm.Requests()
	require.Len(t, reqs, 1)
	require.Contains(t, reqs[0].Messages[1].Content, "payroll: What the company pays its employees")
}

// TestNLAttributeCompletion: a question asking for an attribute only a
// joined table has ("customer names" when shop.orders is what the scorer
// picks) brings that table into RETRIEVE's choice and the LLM's prompt
// (step 32 of docs/retrieval.md). The shop alone is the catalog: there the
// scorer rates customers at about -3, as redundant beside orders, whose key
// column and comment name customers.
func TestNLAttributeCompletion(t *testing.T) {
	e := startNL(t, nlOpts{})
	e.llm.SetRules(llmfake.Rule{Question: "customer names and their orders",
		SQL: "SELECT c.name, count(o.id) AS orders FROM shop.customers c JOIN shop.orders o ON o.customer_id = c.id GROUP BY c.name ORDER BY c.name"})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn := e.connect(t)
	for _, q := range []string{"customer names and their orders", "total order amount per customer name", "list customers with their orders"} {
		reasons := retrieveChosen(ctx, t, conn, q)
		require.Contains(t, reasons, "shop.orders", "%s: %v", q, reasons)
		require.Contains(t, reasons, "shop.customers", "%s: %v", q, reasons)
	}
	rows, err := conn.Query(ctx, "/* nl: customer names and their orders */")
	require.NoError(t, err)
	var names []string
	for rows.Next() {
		var name string
		var n int64
		require.NoError(t, rows.Scan(&name, &n))
		names = append(names, name)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []string{"Ann", "Bob", "Cy"}, names)
	reqs := e.llm.Requests()
	require.Len(t, reqs, 1)
	require.Contains(t, reqs[0].Messages[1].Content, "CREATE TABLE shop.customers")
}

// retrieveChosen asks RETRIEVE question and returns the chosen tables'
// reasons by schema-qualified name.
func retrieveChosen(ctx context.Context, t *testing.T, conn *pgx.Conn, question string) map[string]string {
	t.Helper()
	rows, err := conn.Query(ctx, "RETRIEVE "+question)
	require.NoError(t, err)
	reasons := map[string]string{}
	for rows.Next() {
		var (
			rank                  int32
			schema, table, reason string
			path                  *string
			score                 float64
			chosen                bool
		)
		require.NoError(t, rows.Scan(&rank, &schema, &table, &score, &chosen, &reason, &path))
		if chosen {
			reasons[schema+"."+table] = reason
		}
	}
	require.NoError(t, rows.Err())
	return reasons
}
