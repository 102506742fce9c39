package catalog_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/catalog"
	"github.com/atriumdb/atrium/test/testdb"
)

func TestSyncProposesGlossaryFromComments(t *testing.T) {
	ctx := testCtx(t)
	pool := newPool(t, testdb.New(t))
	mustExec(t, pool,
		`CREATE TABLE customers (customer_id int PRIMARY KEY, status text, last_order date)`,
		`COMMENT ON TABLE customers IS 'People who bought from us. An active customer ordered in the last 90 days; a churned customer has status churned.'`,
		`COMMENT ON COLUMN customers.status IS 'active, churned or blocked'`,
		`CREATE TABLE events (id int PRIMARY KEY, kind text)`,
		`COMMENT ON COLUMN events.kind IS 'what the tracker saw'`,
		`CREATE TABLE plain (id int PRIMARY KEY)`)
	// The DBA's own entry exists already, reviewed: a proposal never
	// replaces it, whatever the case of its words.
	_, err := catalog.Sync(ctx, pool, catalog.SyncOptions{AutoMigrate: true, Schemas: []string{"nothing"}})
	require.NoError(t, err)
	mustExec(t, pool, `INSERT INTO atrium.glossary (term, definition) VALUES ('Active Customer', 'the DBA''s words')`)

	fake := newFakeOpenAI(t)
	long := strings.Repeat("x", catalog.MaxGlossaryDefinition+1)
	fake.chatReply = func(prompt string) (string, bool) {
		switch {
		case strings.HasPrefix(prompt, "Glossary terms for table: public.customers"):
			return "```json\n" + `{"glossary": [
				{"term": "active  customer", "definition": "ordered in the last 90 days", "sql_fragment": "last_order > now() - interval '90 days'"},
				{"term": "Churned customer", "definition": "a customer\nwhose status is churned", "sql_fragment": "status = 'churned'"},
				{"term": "churned customers", "definition": "the same again"},
				{"term": "VIP", "definition": "not in the comments"},
				{"term": "blocked", "definition": "status blocked", "sql_fragment": "1; DROP TABLE customers"},
				{"term": "blocked customer", "definition": "status blocked", "sql_fragment": "true) UNION (SELECT 1"},
				{"term": "status", "definition": "extra key", "owner": "me"},
				{"term": "customer", "definition": "` + long + `"},
				{"term": 42, "definition": "not a string"},
				{"definition": "no term"}
			]}` + "\n```", true
		case strings.HasPrefix(prompt, "Glossary terms for table: public.events"):
			return `Sure! Here are the terms: {"glossary": [{"term": "kind", "definition": "what the tracker saw"}]}`, true
		}
		return "", false
	}
	llm, err := catalog.NewLLMDescriber(catalog.LLMConfig{URL: fake.url(), Model: "fake-chat"})
	require.NoError(t, err)
	opts := catalog.SyncOptions{AutoMigrate: true, LLM: llm, Glossary: llm, LLMTimeout: 10 * time.Second}
	st, err := catalog.Sync(ctx, pool, opts)
	require.NoError(t, err)
	require.Equal(t, 3, st.Described)
	require.Equal(t, 1, st.GlossaryAdded)

	// Only tables with comments were asked.
	fake.mu.Lock()
	var asked []string
	for _, p := range fake.prompts {
		if first, _, _ := strings.Cut(p, "\n"); strings.HasPrefix(first, "Glossary terms for table: ") {
			asked = append(asked, strings.TrimPrefix(first, "Glossary terms for table: "))
		}
	}
	fake.mu.Unlock()
	require.ElementsMatch(t, []string{"public.customers", "public.events"}, asked)

	type entry struct {
		term, def, source string
		frag              *string
		tables            []string
		reviewed          bool
	}
	rows, err := pool.Query(ctx, `SELECT term, definition, sql_fragment, tables, reviewed, source FROM atrium.glossary ORDER BY id`)
	require.NoError(t, err)
	var got []entry
	for rows.Next() {
		var e entry
		require.NoError(t, rows.Scan(&e.term, &e.def, &e.frag, &e.tables, &e.reviewed, &e.source))
		got = append(got, e)
	}
	require.NoError(t, rows.Err())
	require.Len(t, got, 2, "%+v", got)
	require.Equal(t, entry{term: "Active Customer", def: "the DBA's words", source: "sql", tables: []string{}, reviewed: true}, got[0])
	require.Equal(t, "Churned customer", got[1].term)
	require.Equal(t, "a customer whose status is churned", got[1].def)
	require.Equal(t, "status = 'churned'", *got[1].frag)
	require.Equal(t, []string{"public.customers"}, got[1].tables)
	require.False(t, got[1].reviewed)
	require.Equal(t, "llm", got[1].source)

	// Unchanged tables are not asked again.
	calls := fake.chatCalls.Load()
	st, err = catalog.Sync(ctx, pool, opts)
	require.NoError(t, err)
	require.Zero(t, st.GlossaryAdded)
	require.Equal(t, calls, fake.chatCalls.Load())
}

func TestCheckGlossaryFragment(t *testing.T) {
	for _, ok := range []string{
		"status = 'active' AND last_order > now() - interval '90 days'",
		"sum(amount) FILTER (WHERE paid)",
		"customer_id IN (SELECT customer_id FROM orders) -- repeat buyers",
		"  country = 'PT'  ",
	} {
		_, err := catalog.CheckGlossaryFragment(ok)
		require.NoError(t, err, ok)
	}
	for _, bad := range []string{
		"", "status = ", "1; DROP TABLE t", "true) UNION (SELECT 1", "x) FROM t WHERE (y",
		"a AS b", "/* open comment", strings.Repeat("x OR ", catalog.MaxGlossaryFragment),
	} {
		_, err := catalog.CheckGlossaryFragment(bad)
		require.ErrorIs(t, err, catalog.ErrBadGlossaryEntry, bad)
	}
	term, err := catalog.CleanGlossaryTerm("  net\t revenue ")
	require.NoError(t, err)
	require.Equal(t, "net revenue", term)
	for _, bad := range []string{"", "  ", "--", "a\x1b[31mred", strings.Repeat("w", catalog.MaxGlossaryTerm+1)} {
		_, err := catalog.CleanGlossaryTerm(bad)
		require.ErrorIs(t, err, catalog.ErrBadGlossaryEntry, bad)
	}
}
