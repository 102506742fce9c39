package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/catalog"
	"github.com/atriumdb/atrium/migrations"
	"github.com/atriumdb/atrium/test/testdb"
)

// curationDB is a migrated database with the shop fixture, a schema the
// curator role may not read (hr), and that role.
type curationDB struct {
	admin    string // DSN as postgres: the catalog connection
	curator  string // DSN as the curator role, search_path shop
	role     string
	conn     *pgx.Conn // as postgres
	out, err bytes.Buffer
	env      *cliEnv
}

func newCurationDB(t *testing.T) *curationDB {
	t.Helper()
	ctx := context.Background()
	dsn := testdb.New(t, "vector", "pg_trgm")
	_, err := migrations.UpDSN(ctx, dsn, migrations.Options{})
	require.NoError(t, err)
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close(context.Background()) })

	var b [4]byte
	_, _ = rand.Read(b[:])
	role := "atrium_curator_" + hex.EncodeToString(b[:])
	_, err = conn.Exec(ctx, testdb.ShopSchema+`
		CREATE SCHEMA hr;
		CREATE TABLE hr.salaries (keeper_id int, amount int);
		CREATE ROLE `+role+` LOGIN;
		GRANT USAGE ON SCHEMA shop TO `+role+`;
		GRANT SELECT ON ALL TABLES IN SCHEMA shop TO `+role)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx := context.Background()
		_, _ = conn.Exec(ctx, "DROP OWNED BY "+role)
		_, _ = conn.Exec(ctx, "DROP ROLE "+role)
	})

	u, err := url.Parse(dsn)
	require.NoError(t, err)
	u.User = url.User(role)
	q := u.Query()
	q.Set("search_path", "shop")
	u.RawQuery = q.Encode()
	d := &curationDB{admin: dsn, curator: u.String(), role: role, conn: conn}
	d.env = &cliEnv{stdout: &d.out, stderr: &d.err, getenv: func(string) string { return "" }}
	return d
}

func (d *curationDB) count(t *testing.T, sql string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, d.conn.QueryRow(context.Background(), sql, args...).Scan(&n))
	return n
}

func TestExamplesAdd(t *testing.T) {
	d := newCurationDB(t)
	ctx := context.Background()
	add := func(args ...string) error {
		d.out.Reset()
		return runExamples(ctx, d.env, append([]string{"add", "--dsn", d.curator, "--catalog-dsn", d.admin}, args...))
	}

	for _, tc := range []struct {
		name, sql, code, says string
	}{
		{"delete", "DELETE FROM orders", "0A000", "it is a DELETE statement"},
		{"two statements", "SELECT 1; SELECT 2", "0A000", "it holds 2 statements"},
		{"syntax error", "SELEC full_name FROM customers", "42601", "does not parse"},
		{"unreadable table", "SELECT amount FROM hr.salaries", "42501", "checked as role " + d.role},
		{"unknown column", "SELECT nope FROM customers", "42703", "nope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := add("--question", "q", "--sql", tc.sql)
			require.Error(t, err)
			require.Equal(t, tc.code, sqlState(err), "%v", err)
			require.ErrorContains(t, err, "the SQL was refused")
			require.ErrorContains(t, err, tc.says)
			require.ErrorContains(t, err, "SQLSTATE "+tc.code)
		})
	}
	require.Zero(t, d.count(t, "SELECT count(*) FROM atrium.examples"))

	// Unqualified names resolve on the role's search_path; a CTE is not a table.
	require.ErrorContains(t, add("--question", "a\x1b]0;pwned\a question", "--sql", "SELECT 1"), "control characters")
	require.NoError(t, add("--question", "  How many orders\n did each customer place? ", "--note", "from the demo",
		"--sql", "WITH o AS (SELECT * FROM orders) SELECT c.full_name, count(*) FROM customers c JOIN o USING (customer_id) GROUP BY 1;"))
	require.Contains(t, d.out.String(), "added example")
	var question, sql, addedBy, source, note string
	var tables []string
	require.NoError(t, d.conn.QueryRow(ctx, "SELECT question, sql, tables, added_by, source, note FROM atrium.examples").
		Scan(&question, &sql, &tables, &addedBy, &source, &note))
	require.Equal(t, "How many orders did each customer place?", question)
	require.Equal(t, "WITH o AS (SELECT * FROM orders) SELECT c.full_name, count(*) FROM customers c JOIN o USING (customer_id) GROUP BY 1", sql)
	require.Equal(t, []string{"shop.customers", "shop.orders"}, tables)
	require.Equal(t, d.role, addedBy)
	require.Equal(t, "cli", source)
	require.Equal(t, "from the demo", note)
	d.err.Reset()
	require.NoError(t, add("--question", "how many orders did each customer place?", "--sql", "SELECT customer_id, count(*) FROM orders GROUP BY 1"))
	require.Contains(t, d.err.String(), "ask the same question")
	_, err := d.conn.Exec(ctx, "DELETE FROM atrium.examples WHERE sql LIKE 'SELECT customer_id%'")
	require.NoError(t, err)

	// Without --catalog-dsn the example goes to --dsn, where this role
	// may not write atrium.examples: the error says so.
	err = runExamples(ctx, d.env, []string{"add", "--dsn", d.curator, "--question", "q", "--sql", "SELECT 1"})
	require.Equal(t, "42501", sqlState(err), "%v", err)
	require.ErrorContains(t, err, "grants")

	var ue usageError
	require.ErrorAs(t, runExamples(ctx, d.env, []string{"add", "--dsn", d.curator, "--question", "q"}), &ue)
	require.ErrorAs(t, runExamples(ctx, d.env, []string{"add", "--question", "q", "--sql", "SELECT 1"}), &ue)
	require.ErrorAs(t, runExamples(ctx, d.env, []string{"frobnicate"}), &ue)
	require.ErrorAs(t, runExamples(ctx, d.env, nil), &ue)
	d.err.Reset()
	require.ErrorIs(t, runExamples(ctx, d.env, []string{"add", "--help"}), flag.ErrHelp)
	require.Contains(t, d.err.String(), "-question")
	require.Contains(t, d.err.String(), "READ ONLY")
	require.ErrorIs(t, runExamples(ctx, d.env, []string{"--help"}), flag.ErrHelp)
	require.Equal(t, 0, run([]string{"examples", "import", "--help"}, d.env))
	require.Equal(t, 2, run([]string{"examples", "add"}, d.env))
	require.Equal(t, 1, run([]string{"examples", "add", "--dsn", d.curator, "--catalog-dsn", d.admin, "--question", "q", "--sql", "DELETE FROM orders"}, d.env))
}

func TestExamplesImportAllOrNothing(t *testing.T) {
	d := newCurationDB(t)
	ctx := context.Background()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		return p
	}
	imp := func(args ...string) error {
		d.out.Reset()
		return runExamples(ctx, d.env, append([]string{"import", "--dsn", d.curator, "--catalog-dsn", d.admin}, args...))
	}

	bad := write("bad.json", `[
  {"question": "customers in London", "sql": "SELECT full_name FROM customers WHERE city = 'London'"},
  {"question": "delete the orders",
   "sql": "DELETE FROM orders"},
  {"question": "salaries", "sql": "SELECT * FROM hr.salaries"}
]`)
	err := imp(bad)
	require.Error(t, err)
	require.ErrorContains(t, err, "2 of 3 examples failed")
	require.ErrorContains(t, err, "nothing was imported")
	require.ErrorContains(t, err, "line 3: the SQL was refused")
	require.ErrorContains(t, err, "DELETE statement")
	require.ErrorContains(t, err, "line 5: the SQL was refused")
	require.ErrorContains(t, err, "42501")
	require.Zero(t, d.count(t, "SELECT count(*) FROM atrium.examples"))

	typo := write("typo.jsonl", "{\"question\": \"a\", \"sql\": \"SELECT 1\"}\n\n{\"questoin\": \"b\", \"sql\": \"SELECT 2\"}\n")
	err = imp(typo)
	require.ErrorContains(t, err, "line 3")
	require.ErrorContains(t, err, "questoin")

	good := write("good.jsonl", `{"question": "customers in London", "sql": "SELECT full_name FROM customers WHERE city = 'London'"}
{"question": "products by maker", "sql": "SELECT maker, count(*) FROM shop.products GROUP BY maker", "note": "demo"}
`)
	require.NoError(t, imp("--dry-run", good))
	require.Contains(t, d.out.String(), "2 examples passed the checks; nothing stored")
	require.Zero(t, d.count(t, "SELECT count(*) FROM atrium.examples"))

	require.NoError(t, imp(good))
	require.Contains(t, d.out.String(), "imported 2 examples")
	require.Equal(t, 2, d.count(t, "SELECT count(*) FROM atrium.examples WHERE source = 'import' AND added_by = $1", d.role))
	require.Equal(t, 1, d.count(t, "SELECT count(*) FROM atrium.examples WHERE tables = '{shop.products}' AND note = 'demo'"))

	var ue usageError
	require.ErrorAs(t, imp(), &ue)
	require.ErrorAs(t, imp(good, bad), &ue)
}

func TestExamplesPromoteListAndChange(t *testing.T) {
	d := newCurationDB(t)
	ctx := context.Background()
	var good1, good2, wrong int64
	require.NoError(t, d.conn.QueryRow(ctx, `INSERT INTO atrium.feedback (request_id, database_name, role_name, question, sql, tables, verdict, candidate)
		VALUES ('r1', 'db', 'ann', 'customers in London', 'SELECT full_name FROM shop.customers WHERE city = ''London''', '{shop.customers}', 'good', true)
		RETURNING id`).Scan(&good1))
	require.NoError(t, d.conn.QueryRow(ctx, `INSERT INTO atrium.feedback (request_id, database_name, role_name, question, sql, tables, verdict, candidate)
		VALUES ('r2', 'db', 'ann', 'all products', 'SELECT * FROM shop.products', '{shop.products}', 'good', true)
		RETURNING id`).Scan(&good2))
	require.NoError(t, d.conn.QueryRow(ctx, `INSERT INTO atrium.feedback (request_id, database_name, role_name, question, sql, verdict, hint)
		VALUES ('r3', 'db', 'bob', 'orders last week', 'SELECT 1', 'wrong', 'it ignored the date')
		RETURNING id`).Scan(&wrong))
	// The curator works on the catalog with exactly the grants
	// docs/learning.md lists, and none on catalog_state.
	_, err := d.conn.Exec(ctx, `GRANT USAGE ON SCHEMA atrium TO `+d.role+`;
		GRANT SELECT, INSERT, UPDATE, DELETE ON atrium.examples TO `+d.role+`;
		GRANT SELECT, UPDATE ON atrium.feedback TO `+d.role)
	require.NoError(t, err)
	catalogArgs := []string{"--dsn", d.curator}
	cmd := func(args ...string) error {
		d.out.Reset()
		return runExamples(ctx, d.env, append(append([]string{args[0]}, catalogArgs...), args[1:]...))
	}

	require.NoError(t, cmd("candidates", "--json"))
	var cands []candidateRow
	require.NoError(t, json.Unmarshal(d.out.Bytes(), &cands))
	require.Len(t, cands, 2)
	require.Equal(t, good1, cands[0].ID)

	require.NoError(t, cmd("promote", itoa(good1)))
	var ex1 int64
	require.NoError(t, d.conn.QueryRow(ctx, "SELECT example_id FROM atrium.feedback WHERE id = $1", good1).Scan(&ex1))
	require.Contains(t, d.out.String(), "feedback "+itoa(good1)+": example "+itoa(ex1))
	require.NoError(t, cmd("promote", itoa(good1)), "promoting twice reports the same example")
	require.Contains(t, d.out.String(), "example "+itoa(ex1))

	err = cmd("promote", itoa(wrong))
	require.Equal(t, "22023", sqlState(err), "%v", err)
	require.ErrorContains(t, err, "not a candidate")
	err = cmd("promote", itoa(good2), "999999")
	require.Equal(t, "P0002", sqlState(err), "%v", err)
	require.ErrorContains(t, err, "nothing was promoted")
	require.Equal(t, 1, d.count(t, "SELECT count(*) FROM atrium.examples"), "all or nothing")

	require.NoError(t, cmd("candidates"))
	require.Contains(t, d.out.String(), "all products")
	require.NotContains(t, d.out.String(), "customers in London")

	require.NoError(t, cmd("list", "--json"))
	var list []exampleRow
	require.NoError(t, json.Unmarshal(d.out.Bytes(), &list))
	require.Len(t, list, 1)
	require.Equal(t, "feedback", list[0].Source)
	require.Equal(t, []string{"shop.customers"}, list[0].Tables)
	require.Equal(t, good1, *list[0].FeedbackID)
	require.True(t, list[0].Enabled)

	require.NoError(t, cmd("disable", itoa(ex1)))
	require.NoError(t, cmd("list"))
	require.Contains(t, d.out.String(), "false")
	require.Contains(t, d.out.String(), "customers in London")
	err = cmd("remove", itoa(ex1), "424242")
	require.ErrorContains(t, err, "no example with id 424242")
	require.Equal(t, 1, d.count(t, "SELECT count(*) FROM atrium.examples"))
	require.NoError(t, cmd("remove", itoa(ex1)))
	require.Zero(t, d.count(t, "SELECT count(*) FROM atrium.examples"))

	var ue usageError
	require.ErrorAs(t, cmd("promote"), &ue)
	require.ErrorAs(t, cmd("promote", "x"), &ue)
}

func TestGlossaryCommands(t *testing.T) {
	d := newCurationDB(t)
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, d.admin)
	require.NoError(t, err)
	defer pool.Close()
	_, err = catalog.Sync(ctx, pool, catalog.SyncOptions{Schemas: []string{"shop", "zoo"}})
	require.NoError(t, err)
	// The grants docs/learning.md lists for glossary curators.
	_, err = d.conn.Exec(ctx, `GRANT USAGE ON SCHEMA atrium TO `+d.role+`;
		GRANT SELECT ON atrium.tables TO `+d.role+`;
		GRANT SELECT, INSERT, UPDATE, DELETE ON atrium.glossary TO `+d.role)
	require.NoError(t, err)
	cmd := func(args ...string) error {
		d.out.Reset()
		return runGlossary(ctx, d.env, append(append([]string{args[0]}, "--dsn", d.curator), args[1:]...))
	}

	require.NoError(t, cmd("add", "--term", "big customer", "--definition", "a customer with more than 2 order lines",
		"--sql-fragment", "customer_id IN (SELECT customer_id FROM shop.orders GROUP BY 1 HAVING count(*) > 2)",
		"--tables", "customers,shop.orders"))
	var tables []string
	var reviewed bool
	var source string
	require.NoError(t, d.conn.QueryRow(ctx, "SELECT tables, reviewed, source FROM atrium.glossary WHERE term = 'big customer'").
		Scan(&tables, &reviewed, &source))
	require.Equal(t, []string{"shop.customers", "shop.orders"}, tables)
	require.True(t, reviewed)
	require.Equal(t, "cli", source)

	err = cmd("add", "--term", " Big  Customer ", "--definition", "again")
	require.ErrorContains(t, err, "already has")
	err = cmd("add", "--term", "keeper", "--definition", "d", "--tables", "shop.keepers")
	require.ErrorContains(t, err, "not in the catalog")
	var ue usageError
	require.ErrorAs(t, cmd("add", "--term", "x", "--definition", "d", "--sql-fragment", "1; DROP TABLE shop.orders"), &ue)
	require.ErrorAs(t, cmd("add", "--term", "x"), &ue)
	require.ErrorAs(t, cmd("add", "--term", "\x1b[2J", "--definition", "d"), &ue)

	// An LLM's proposal: listed as unreviewed until someone reviews it.
	var proposed int64
	require.NoError(t, d.conn.QueryRow(ctx, `INSERT INTO atrium.glossary (term, definition, tables, reviewed, source)
		VALUES ('zebra keeper', 'keeps zebras', '{zoo.animals}', false, 'llm') RETURNING id`).Scan(&proposed))
	require.NoError(t, cmd("list", "--unreviewed"))
	require.Contains(t, d.out.String(), "zebra keeper")
	require.NotContains(t, d.out.String(), "big customer")
	require.NoError(t, cmd("review", itoa(proposed)))
	require.NoError(t, cmd("list", "--unreviewed", "--json"))
	require.JSONEq(t, "[]", d.out.String())
	require.NoError(t, cmd("list", "--json"))
	var all []glossaryRow
	require.NoError(t, json.Unmarshal(d.out.Bytes(), &all))
	require.Len(t, all, 2)
	require.True(t, all[1].Reviewed)

	require.ErrorContains(t, cmd("review", "31337"), "no glossary entry with id 31337")
	require.NoError(t, cmd("remove", itoa(proposed)))
	require.Equal(t, 1, d.count(t, "SELECT count(*) FROM atrium.glossary"))
	require.ErrorIs(t, runGlossary(ctx, d.env, []string{"add", "--help"}), flag.ErrHelp)
	require.ErrorAs(t, runGlossary(ctx, d.env, []string{"nope"}), &ue)
}

func itoa(id int64) string { return strconv.FormatInt(id, 10) }
