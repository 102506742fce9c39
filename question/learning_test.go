package question

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/proxy/resultcache"
	"github.com/atriumdb/atrium/retriever"
	"github.com/atriumdb/atrium/sqlgen"
	"github.com/atriumdb/atrium/test/llmfake"
)

// learnedRetriever is a TEST DOUBLE standing in for the catalog
// retriever's example and glossary matching (package retriever's job): it
// runs the real retriever, then reports every enabled row of
// atrium.examples (Exact when the questions are equal ignoring case, blanks
// and trailing punctuation) and every reviewed atrium.glossary term the
// question contains. It reads them as the catalog's owner, as the real
// retriever does, so what the asking role may see is left to the Handler.
// For a follow-up it also stands in for the retriever keeping the
// previous turn's tables as candidates: the tables the previous question
// retrieves that the turn used are added as chosen. It records each Ask.
type learnedRetriever struct {
	Retriever
	pool *pgxpool.Pool

	mu   sync.Mutex
	asks []retriever.Ask
}

func (r *learnedRetriever) RetrieveAsk(ctx context.Context, a retriever.Ask) (*retriever.Result, error) {
	r.mu.Lock()
	r.asks = append(r.asks, a)
	r.mu.Unlock()
	res, err := r.Retriever.RetrieveAsk(ctx, a)
	if err != nil {
		return nil, err
	}
	if res, err = r.keepPrevious(ctx, res, a.Previous); err != nil {
		return nil, err
	}
	norm := func(s string) string {
		return strings.TrimRight(strings.ToLower(strings.Join(strings.Fields(s), " ")), " ?.!;")
	}
	rows, err := r.pool.Query(ctx, `SELECT id, question, sql, tables FROM atrium.examples WHERE enabled ORDER BY id`)
	if err != nil {
		return nil, err
	}
	var exact, near []retriever.ExampleHit
	for rows.Next() {
		var h retriever.ExampleHit
		if err := rows.Scan(&h.ID, &h.Question, &h.SQL, &h.Tables); err != nil {
			return nil, err
		}
		if norm(h.Question) == norm(a.Question) {
			h.Exact, h.Similarity = true, 1
			exact = append(exact, h)
		} else {
			h.Similarity = 0.5
			near = append(near, h)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows, err = r.pool.Query(ctx, `SELECT id, term, definition, coalesce(sql_fragment, ''), tables FROM atrium.glossary
		WHERE reviewed AND strpos(lower($1), lower(term)) > 0 ORDER BY id`, a.Question)
	if err != nil {
		return nil, err
	}
	var gloss []retriever.GlossaryHit
	for rows.Next() {
		var g retriever.GlossaryHit
		if err := rows.Scan(&g.ID, &g.Term, &g.Definition, &g.SQLFragment, &g.Tables); err != nil {
			return nil, err
		}
		gloss = append(gloss, g)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := *res
	out.Examples, out.Glossary = append(exact, near...), gloss
	return &out, nil
}

func (r *learnedRetriever) keepPrevious(ctx context.Context, res *retriever.Result, prev *retriever.Turn) (*retriever.Result, error) {
	if prev == nil {
		return res, nil
	}
	pr, err := r.Retriever.RetrieveAsk(ctx, retriever.Ask{Question: prev.Question})
	if err != nil {
		return nil, err
	}
	used := map[string]bool{}
	for _, t := range prev.Tables {
		used[t] = true
	}
	name := func(t retriever.ResultTable) string { return t.Table.Schema + "." + t.Table.Name }
	out := *res
	out.Tables = nil
	kept := map[string]bool{}
	for _, t := range pr.Chosen() {
		if used[name(t)] {
			t.Reasons = []string{"previous"}
			out.Tables = append(out.Tables, t)
			kept[name(t)] = true
		}
	}
	for _, t := range res.Tables {
		if !kept[name(t)] {
			out.Tables = append(out.Tables, t)
		}
	}
	for i := range out.Tables {
		out.Tables[i].Rank = i + 1
	}
	return &out, nil
}

func (r *learnedRetriever) lastAsk() retriever.Ask {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.asks[len(r.asks)-1]
}

// records collects the Handler's question records.
type records struct {
	mu   sync.Mutex
	recs []sqlgen.QuestionRecord
}

func (r *records) add(_ context.Context, q sqlgen.QuestionRecord) {
	r.mu.Lock()
	r.recs = append(r.recs, q)
	r.mu.Unlock()
}

func (r *records) last() sqlgen.QuestionRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.recs[len(r.recs)-1]
}

func newLearnedEnv(t *testing.T, noLLM bool, rules ...llmfake.Rule) (*env, *learnedRetriever, *records) {
	t.Helper()
	return newLearnedEnvWith(t, envOpts{rules: rules, noLLM: noLLM})
}

func newLearnedEnvWith(t *testing.T, o envOpts) (*env, *learnedRetriever, *records) {
	t.Helper()
	var lr *learnedRetriever
	recs := &records{}
	e := newEnv(t, envOpts{rules: o.rules, noLLM: o.noLLM, store: o.store, onQuestion: recs.add, wrap: func(r Retriever, pool *pgxpool.Pool) Retriever {
		lr = &learnedRetriever{Retriever: r, pool: pool}
		return lr
	}})
	return e, lr, recs
}

const (
	londonSQL = "SELECT full_name FROM shop.customers WHERE city = 'London' ORDER BY 1"
	arubaSQL  = "SELECT full_name FROM shop.customers WHERE city = 'Aruba' ORDER BY 1"
)

func lastPrompt(t *testing.T, llm *llmfake.Server) string {
	t.Helper()
	reqs := llm.Requests()
	require.NotEmpty(t, reqs)
	return reqs[len(reqs)-1].Messages[1].Content
}

// TestFollowUpSession: within one session a follow-up is asked with the
// previous turn (retrieval gets it, the prompt shows it, the NOTICE and
// the query log say so); an unrelated question, nl-new, DISCARD ALL,
// RESET ALL and another session do not carry it.
func TestFollowUpSession(t *testing.T) {
	e, lr, recs := newLearnedEnv(t, false,
		llmfake.Rule{Question: "customers in London", SQL: londonSQL},
		llmfake.Rule{Question: "and in Aruba", SQL: arubaSQL},
		llmfake.Rule{Question: "animals", SQL: "SELECT species FROM zoo.animals ORDER BY 1"})
	c := e.connect(t, "postgres")

	a := c.ask(t, "/* nl: customers in London */")
	require.Nil(t, a.err)
	require.Equal(t, [][]string{{"Ada Lovelace"}}, a.rows)
	require.Nil(t, lr.lastAsk().Previous)
	first := recs.last()
	require.Contains(t, first.Tables, "shop.customers")

	a = c.ask(t, "/* nl: and in Aruba? */")
	require.Nil(t, a.err)
	require.Equal(t, [][]string{{"Kyle Smith"}}, a.rows)
	prev := lr.lastAsk().Previous
	require.NotNil(t, prev, "retrieval got the previous turn")
	require.Equal(t, "customers in London", prev.Question)
	require.Equal(t, londonSQL, prev.SQL)
	require.Contains(t, prev.Tables, "shop.customers", "retrieval keeps the previous tables")
	prompt := lastPrompt(t, e.llm)
	require.Contains(t, prompt, "-- Previous question in this conversation:\n--   customers in London\n-- Its SQL:\n--   "+londonSQL+"\n")
	require.Contains(t, prompt, "\nQuestion: and in Aruba?\n")
	require.Contains(t, strings.Join(a.notices, "\n"), "Follow-up of: customers in London")
	require.Equal(t, first.RequestID, recs.last().FollowUpOf)

	// RETRIEVE follows up too: retrieval gets the previous turn.
	a = c.ask(t, "RETRIEVE and their orders?")
	require.Nil(t, a.err)
	require.NotNil(t, lr.lastAsk().Previous)
	require.Equal(t, "and in Aruba?", lr.lastAsk().Previous.Question)

	// A new topic: asked on its own.
	a = c.ask(t, "/* nl: How many animals does the zoo keep? */")
	require.Nil(t, a.err)
	require.Nil(t, lr.lastAsk().Previous, "a new topic does not drag old tables in")
	require.NotContains(t, lastPrompt(t, e.llm), "Previous question")
	require.Empty(t, recs.last().FollowUpOf)

	// Starting fresh: the same words without the previous turn name no
	// table, so retrieval abstains. Answers may come from the cache now,
	// so the records (what the query log gets) tell what followed up.
	abstains := func(t *testing.T, c *client, q string) {
		t.Helper()
		a := c.ask(t, q)
		require.NotNil(t, a.err, q)
		require.Equal(t, "42P01", a.err.Code, "%s: %s", q, a.err.Message)
		require.Empty(t, recs.last().FollowUpOf)
	}
	for _, reset := range []string{"DISCARD ALL", "RESET ALL", ""} {
		require.Nil(t, c.ask(t, "/* nl: customers in London */").err)
		if reset == "" {
			abstains(t, c, "/* nl-new: and in Aruba? */")
			continue
		}
		require.Nil(t, c.ask(t, reset).err, "%s passes through to the server", reset)
		abstains(t, c, "/* nl: and in Aruba? */")
	}
	// nl-new's question is the new first turn.
	require.Nil(t, c.ask(t, "/* nl-new: customers in London */").err)
	start := recs.last()
	require.Empty(t, start.FollowUpOf)
	require.Nil(t, c.ask(t, "/* nl: and in Aruba? */").err)
	require.Equal(t, start.RequestID, recs.last().FollowUpOf)

	// Another session never continues this one's turn.
	abstains(t, e.connect(t, "postgres"), "/* nl: and in Aruba? */")
}

// TestFollowUpNeverServedFresh: the same words asked on their own and as
// a follow-up are answered and cached apart, across sessions, with the
// in-process cache and with Redis.
func TestFollowUpNeverServedFresh(t *testing.T) {
	forEachCache(t, testFollowUpNeverServedFresh)
}

func testFollowUpNeverServedFresh(t *testing.T, store resultcache.Store) {
	e, _, _ := newLearnedEnvWith(t, envOpts{store: store, rules: []llmfake.Rule{
		{Question: "customers in London", SQL: londonSQL},
		{Question: "only customers in Aruba", Times: 1, SQL: "SELECT 'on its own' AS answer"},
		{Question: "only customers in Aruba", Times: 1, SQL: arubaSQL},
	}})

	// On its own first.
	a := e.connect(t, "postgres").ask(t, "/* nl: only customers in Aruba */")
	require.Nil(t, a.err)
	require.Equal(t, [][]string{{"on its own"}}, a.rows)
	require.Equal(t, 1, e.llm.Calls())

	// As a follow-up: not served the cached answer above.
	c := e.connect(t, "postgres")
	require.Nil(t, c.ask(t, "/* nl: customers in London */").err)
	a = c.ask(t, "/* nl: only customers in Aruba */")
	require.Nil(t, a.err)
	require.Equal(t, [][]string{{"Kyle Smith"}}, a.rows)
	require.Equal(t, 3, e.llm.Calls())

	// Each again in new sessions: each its own cached answer.
	a = e.connect(t, "postgres").ask(t, "/* nl: only customers in Aruba */")
	require.Equal(t, [][]string{{"on its own"}}, a.rows)
	require.Contains(t, strings.Join(a.notices, "\n"), "(cached result)")
	c = e.connect(t, "postgres")
	require.Nil(t, c.ask(t, "/* nl: customers in London */").err)
	a = c.ask(t, "/* nl: only customers in Aruba */")
	require.Equal(t, [][]string{{"Kyle Smith"}}, a.rows)
	require.Contains(t, strings.Join(a.notices, "\n"), "(cached result)")
	require.Equal(t, 3, e.llm.Calls())
}

const learnedRows = `
INSERT INTO atrium.examples (question, sql, tables) VALUES
  ('How many customers are there?', 'SELECT count(*) AS customers FROM shop.customers', '{shop.customers}'),
  ('How many animals?', 'SELECT count(*) AS animals_secret_count FROM zoo.animals', '{zoo.animals}'),
  ('Which animals have a keeper?', 'SELECT species AS keeper_secret FROM zoo.animals WHERE keeper IS NOT NULL', '{}');
INSERT INTO atrium.glossary (term, definition, sql_fragment, tables) VALUES
  ('londoner', 'a customer whose city is London', 'city = ''London''', '{shop.customers}'),
  ('zookeeper', 'secret definition of the zoo staff', NULL, '{zoo.animals}');
`

// TestExamplesAndGlossary: an example equal to the question answers
// without the LLM, with the client's privileges; a role that cannot read
// an example's (or a term's) tables never gets its rows nor sees its SQL
// or text; the others reach the prompt as few-shot pairs and definitions.
func TestExamplesAndGlossary(t *testing.T) {
	for _, noLLM := range []bool{false, true} {
		name := "with LLM"
		if noLLM {
			name = "without LLM"
		}
		t.Run(name, func(t *testing.T) {
			e, _, recs := newLearnedEnv(t, noLLM,
				llmfake.Rule{Question: "londoner", SQL: londonSQL})
			_, err := e.pool.Exec(context.Background(), learnedRows)
			require.NoError(t, err)
			shopOnly := e.newRole(t, "GRANT USAGE ON SCHEMA shop TO %[1]s; GRANT SELECT ON ALL TABLES IN SCHEMA shop TO %[1]s")
			var exampleID int64
			require.NoError(t, e.pool.QueryRow(context.Background(), "SELECT id FROM atrium.examples WHERE question LIKE 'How many customers%'").Scan(&exampleID))

			for _, user := range []string{"postgres", shopOnly} {
				a := e.connect(t, user).ask(t, "/* nl: how many customers are there */")
				require.Nil(t, a.err, user)
				require.Equal(t, [][]string{{"2"}}, a.rows)
				require.Contains(t, strings.Join(a.notices, "\n"), "SQL of example")
				require.Equal(t, exampleID, recs.last().ExampleID)
				require.Equal(t, 0, e.llm.Calls(), "an example answers without the LLM")
			}

			// The role cannot read zoo.animals: no rows, no example SQL,
			// whatever the example's tables column says.
			c := e.connect(t, shopOnly)
			for _, q := range []string{"How many animals?", "Which animals have a keeper?", "which animals does a zookeeper keep"} {
				a := c.ask(t, "/* nl: "+q+" */")
				require.Empty(t, a.rows, q)
				require.NotNil(t, a.err, q)
				seen := strings.Join(a.notices, "\n") + a.err.Message + a.err.Detail + a.err.Hint
				require.NotContains(t, seen, "secret", q)
				require.Zero(t, recs.last().ExampleID)
			}
			for _, r := range e.llm.Requests() {
				for _, m := range r.Messages {
					require.NotContains(t, m.Content, "secret", "the LLM never saw what the role may not read")
				}
			}
			if noLLM {
				return
			}

			// Few-shot pairs and glossary in the prompt, as each role may
			// read them.
			a := e.connect(t, "postgres").ask(t, "/* nl: the londoner customers, zookeeper aside */")
			require.Nil(t, a.err)
			prompt := lastPrompt(t, e.llm)
			require.Contains(t, prompt, "--   londoner: a customer whose city is London [SQL: city = 'London']\n")
			require.Contains(t, prompt, "--   zookeeper: secret definition of the zoo staff\n")
			require.Contains(t, prompt, "-- Example 1 question: How many customers are there?\n-- Example 1 SQL: SELECT count(*) AS customers FROM shop.customers\n")
			require.Contains(t, prompt, "animals_secret_count")

			a = e.connect(t, shopOnly).ask(t, "/* nl: the londoner customers, zookeeper aside */")
			require.Nil(t, a.err)
			prompt = lastPrompt(t, e.llm)
			require.Contains(t, prompt, "--   londoner: a customer whose city is London")
			require.Contains(t, prompt, "-- Example 1 SQL: SELECT count(*) AS customers FROM shop.customers\n")
			require.NotContains(t, prompt, "secret")
			require.NotContains(t, prompt, "Example 2")
		})
	}
}
