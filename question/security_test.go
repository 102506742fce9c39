package question

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/proxy/resultcache"
	"github.com/atriumdb/atrium/test/llmfake"
	"github.com/atriumdb/atrium/test/testdb"
)

// secFixture holds what the security tests need: a table a role may not
// read, a table with a column it may not read, a table with row-level
// security behind a security_invoker view, a table a CTE is named after,
// timestamps, non-ASCII text, and one table name in two schemas.
const secFixture = `
CREATE SCHEMA secret;
CREATE TABLE secret.salaries (emp_id int PRIMARY KEY, employee_name text, salary_amount int);
COMMENT ON TABLE secret.salaries IS 'salaries of every employee';
INSERT INTO secret.salaries VALUES (1, 'Grace Hopper', 250000);
CREATE SCHEMA hr;
CREATE TABLE hr.staff (staff_id int PRIMARY KEY, staff_name text, ssn_number text);
COMMENT ON COLUMN hr.staff.ssn_number IS 'social security number of the staff member';
INSERT INTO hr.staff VALUES (1, 'Alan Turing', 'SSN Zebulon-078'), (2, 'Ada Byron', 'SSN Quixote-219');
CREATE TABLE hr.tickets (ticket_id int PRIMARY KEY, tenant text NOT NULL, ticket_subject text);
COMMENT ON TABLE hr.tickets IS 'support tickets of every tenant';
INSERT INTO hr.tickets VALUES (1, 'acme', 'Printer broken Zanzibar'), (2, 'globex', 'Hidden Kilimanjaro incident');
ALTER TABLE hr.tickets ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_rows ON hr.tickets USING (tenant = current_setting('app.tenant', true));
CREATE VIEW hr.tenant_tickets WITH (security_invoker = true) AS SELECT ticket_id, tenant, ticket_subject FROM hr.tickets;
CREATE TABLE hr.tenant_docs (doc_id int PRIMARY KEY, doc_title text);
INSERT INTO hr.tenant_docs VALUES (1, 'handbook'), (2, 'roadmap');
CREATE TABLE hr.events (event_id int PRIMARY KEY, happened_at timestamptz, label text);
INSERT INTO hr.events VALUES (1, '2024-01-01 00:00:00+00', 'café opening');
CREATE SCHEMA rt_a;
CREATE SCHEMA rt_b;
CREATE TABLE rt_a.things (thing text);
CREATE TABLE rt_b.things (thing text);
INSERT INTO rt_a.things VALUES ('apple from a');
INSERT INTO rt_b.things VALUES ('banana from b');
`

// secRules are the fake LLM's scripted answers (a test double).
func secRules() []llmfake.Rule {
	return []llmfake.Rule{
		{Question: "salaries", SQL: "SELECT 1 AS one"},
		{Question: "with the clock", SQL: "SELECT label, pg_catalog.now() > '2000-01-01' AS recent FROM hr.events ORDER BY 1"},
		{Question: "staff", SQL: "SELECT staff_name FROM hr.staff ORDER BY 1"},
		{Question: "tickets", SQL: "SELECT ticket_subject FROM hr.tenant_tickets ORDER BY 1"},
		{Question: "documents", SQL: "WITH tenant_docs AS (SELECT doc_id, doc_title FROM tenant_docs) SELECT d.doc_title FROM tenant_docs d ORDER BY 1"},
		{Question: "events", SQL: "SELECT happened_at, label FROM hr.events ORDER BY 1"},
		{Question: "things", SQL: "SELECT thing FROM things ORDER BY 1"},
	}
}

const secGrants = `GRANT USAGE ON SCHEMA hr, secret, rt_a, rt_b TO %[1]s;
GRANT SELECT (staff_id, staff_name) ON hr.staff TO %[1]s;
GRANT SELECT ON hr.tickets, hr.tenant_tickets, hr.tenant_docs, hr.events, rt_a.things, rt_b.things TO %[1]s;`

func newSecEnv(t *testing.T, store resultcache.Store, noLLM bool) (*env, string) {
	t.Helper()
	e := newEnv(t, envOpts{fixture: secFixture, schemas: []string{"secret", "hr", "rt_a", "rt_b"}, rules: secRules(), noLLM: noLLM, store: store})
	return e, e.newRole(t, secGrants)
}

// forEachCache runs f with the in-process cache and with a real Redis.
func forEachCache(t *testing.T, f func(t *testing.T, store resultcache.Store)) {
	t.Run("memory", func(t *testing.T) { f(t, nil) })
	t.Run("redis", func(t *testing.T) {
		addr, _ := testdb.StartRedis(t)
		client, err := resultcache.OpenRedis("redis://" + addr)
		require.NoError(t, err)
		f(t, resultcache.NewRedis(client))
	})
}

// everything is all a client saw of an answer, as one string.
func (a answer) everything() string {
	var b strings.Builder
	for _, r := range a.rows {
		b.WriteString(strings.Join(r, "|"))
		b.WriteByte('\n')
	}
	b.WriteString(strings.Join(a.notices, "\n"))
	if a.err != nil {
		b.WriteString(a.err.Message + "\n" + a.err.Detail + "\n" + a.err.Hint)
	}
	return b.String()
}

// TestUnreadableTableNotNamedWithoutLLM: without an LLM a question fails
// with 55000 naming what retrieval found; a role without SELECT on
// secret.salaries never sees its name there (finding 3), while a superuser
// does (so the question does retrieve it).
func TestUnreadableTableNotNamedWithoutLLM(t *testing.T) {
	e, role := newSecEnv(t, nil, true)
	const q = "/* nl: salaries of every employee */"

	su := e.connect(t, "postgres").ask(t, q)
	require.NotNil(t, su.err)
	require.Equal(t, "55000", su.err.Code)
	require.Contains(t, su.err.Detail, "secret.salaries", "the superuser's retrieval finds the table")

	a := e.connect(t, role).ask(t, q)
	require.NotNil(t, a.err)
	require.NotContains(t, a.everything(), "salaries")

	// RETRIEVE decides the same way.
	r := e.connect(t, role).ask(t, "RETRIEVE salaries of every employee")
	require.NotContains(t, r.everything(), "salaries")
}

// TestPromptHoldsOnlyReadableData inspects what the (fake) LLM received:
// no unreadable table, no column without a grant, no value of a table with
// row-level security (finding 3). The NOTICE names no unreadable table.
func TestPromptHoldsOnlyReadableData(t *testing.T) {
	e, role := newSecEnv(t, nil, false)
	c := e.connect(t, role)

	a := c.ask(t, "/* nl: salaries of every employee */")
	require.NotContains(t, a.everything(), "salaries")
	a = c.ask(t, "/* nl: staff names and social security number of the staff member Zebulon */")
	require.Nil(t, a.err)
	require.Equal(t, [][]string{{"Ada Byron"}, {"Alan Turing"}}, a.rows)
	a = c.ask(t, "/* nl: support tickets of every tenant about Hidden Kilimanjaro incident */")
	require.Nil(t, a.err)
	require.Empty(t, a.rows, "app.tenant is unset: the policy shows no row")

	reqs := e.llm.Requests()
	prompts := map[string]string{} // first word of the question → user message
	for _, r := range reqs {
		prompts[strings.Fields(r.Question)[0]] = r.Messages[1].Content
		for _, m := range r.Messages {
			// The schema part: the question itself may name anything.
			content, _, _ := strings.Cut(m.Content, "\nQuestion: ")
			for _, secret := range []string{"salaries", "salary_amount", "Grace Hopper", "ssn_number", "social security", "Zebulon-078", "Quixote", "Kilimanjaro", "Zanzibar"} {
				require.NotContains(t, content, secret, "the prompt for %q", r.Question)
			}
		}
	}
	// The readable parts do reach the prompt.
	require.Contains(t, prompts["staff"], "staff_name")
	require.Contains(t, prompts["staff"], "Alan Turing", "sample rows of readable columns")
	require.Contains(t, prompts["support"], "ticket_subject")
}

// TestRowSecurityValuesNotInPrompt: a role that may read a table with RLS
// sees, in the prompt, neither value-index hits nor sample rows beyond its
// own rows (the sync role sampled every tenant's rows).
func TestRowSecurityValuesNotInPrompt(t *testing.T) {
	e, role := newSecEnv(t, nil, false)
	c := e.connect(t, role)
	_, err := c.Exec(context.Background(), "SET app.tenant = 'acme'")
	require.NoError(t, err)
	a := c.ask(t, "/* nl: support tickets of every tenant about Hidden Kilimanjaro incident */")
	require.Nil(t, a.err)
	require.Equal(t, [][]string{{"Printer broken Zanzibar"}}, a.rows)
	reqs := e.llm.Requests()
	require.Len(t, reqs, 1)
	schema, _, _ := strings.Cut(reqs[0].Messages[1].Content, "\nQuestion: ")
	require.NotContains(t, schema, "Kilimanjaro", "another tenant's value")
	require.NotContains(t, schema, "globex", "another tenant's value")
}
