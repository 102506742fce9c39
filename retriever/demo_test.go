package retriever

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/catalog"
	"github.com/atriumdb/atrium/migrations"
	"github.com/atriumdb/atrium/retriever/vocab"
	"github.com/atriumdb/atrium/test/testdb"
)

// The demo's question on the bundled sample database (deploy/sample): its
// tables span two schemas joined by a foreign key (support.tickets →
// shop.customers). The schema-coherence features used to treat each schema
// as a separate database, as a Spider database is, and dropped
// shop.customers; they now group schemas that foreign keys connect. And
// hr.jobs came in on value evidence ("Customer Support Agent") whose only
// informative word, "support", names a schema; such words no longer count.
func TestDemoQuestionSpansSchemas(t *testing.T) {
	ctx, r, _ := sampleRetriever(t)
	got := chosenFor(ctx, t, r, "Which customers opened the most support tickets about late deliveries?")
	require.Contains(t, got, "shop.customers")
	require.Contains(t, got, "support.tickets")
	for _, name := range got {
		require.False(t, strings.HasPrefix(name, "hr."), "nothing from hr: %v", got)
	}
}

// sampleCatalog loads the bundled sample database (deploy/sample) into a
// fresh database and syncs its catalog.
// sampleRetriever is a retriever over the sample database's catalog, with a
// context the test's end cancels.
func sampleRetriever(t *testing.T) (context.Context, *Retriever, *pgxpool.Pool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	pool, emb := sampleCatalog(ctx, t)
	r, err := New(pool, Config{}, Options{Embedder: emb})
	require.NoError(t, err)
	return ctx, r, pool
}

// chosenFor retrieves for q and returns the chosen tables' names, logged.
func chosenFor(ctx context.Context, t *testing.T, r *Retriever, q string) []string {
	t.Helper()
	res, err := r.Retrieve(ctx, q)
	require.NoError(t, err)
	got := chosenNames(res)
	t.Logf("%s\n  chosen: %v", q, got)
	return got
}

func sampleCatalog(ctx context.Context, t *testing.T) (*pgxpool.Pool, catalog.Embedder) {
	t.Helper()
	dsn := testdb.New(t, "vector", "pg_trgm")
	pool, err := OpenPool(ctx, dsn, 100, nil)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	files, err := filepath.Glob("../deploy/sample/[0-9]*.sql")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	sort.Strings(files)
	// One session: 03_data.sql uses pg_temp helpers 02_helpers.sql defines.
	conn, err := pool.Acquire(ctx)
	require.NoError(t, err)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		_, err = conn.Exec(ctx, string(b))
		require.NoError(t, err, f)
	}
	conn.Release()
	_, err = migrations.Up(ctx, pool, migrations.Options{})
	require.NoError(t, err)
	// The embedder the shipped scorer was trained with.
	emb, err := vocab.NewDefaultEmbedder()
	require.NoError(t, err)
	_, err = catalog.Sync(ctx, pool, catalog.SyncOptions{Embedder: emb})
	require.NoError(t, err)
	return pool, emb
}

// Issue 12's check: a question using a glossary term retrieves the term's
// tables on the sample database, and lists the term.
func TestSampleGlossaryTerm(t *testing.T) {
	ctx, r, pool := sampleRetriever(t)
	const q = "How many active customers do we have in Portugal?"
	before, err := r.Retrieve(ctx, q)
	require.NoError(t, err)
	t.Logf("without the glossary: %v", chosenNames(before))
	_, err = pool.Exec(ctx, `INSERT INTO atrium.glossary (term, definition, sql_fragment, tables) VALUES
		('active customer', 'A customer with an order in the last 90 days.',
		 'EXISTS (SELECT 1 FROM shop.orders o WHERE o.customer_id = c.customer_id AND o.ordered_at > now() - interval ''90 days'')',
		 '{shop.customers,shop.orders}')`)
	require.NoError(t, err)
	res, err := r.Retrieve(ctx, q)
	require.NoError(t, err)
	got := chosenNames(res)
	t.Logf("with the glossary: %v", got)
	require.Contains(t, got, "shop.customers")
	require.Contains(t, got, "shop.orders")
	require.Contains(t, reasonsOf(res, "shop.orders"), ReasonGlossary)
	require.Len(t, res.Glossary, 1)
	require.Equal(t, "active customer", res.Glossary[0].Term)
	for _, name := range got {
		require.False(t, strings.HasPrefix(name, "hr."), "nothing from hr: %v", got)
	}
	// The term's tables come with the join between them, as any chosen
	// tables do: the prompt must show how to join them.
	joined := false
	for _, jp := range res.JoinPaths {
		a, b := jp.From.Schema+"."+jp.From.Name, jp.To.Schema+"."+jp.To.Name
		if (a == "shop.orders" && b == "shop.customers") || (a == "shop.customers" && b == "shop.orders") {
			joined = true
		}
	}
	require.True(t, joined, "shop.orders joins shop.customers: %v", res.JoinPaths)

	// A term whose tables expansion would drop still comes with its join.
	_, err = pool.Exec(ctx, `INSERT INTO atrium.glossary (term, definition, tables) VALUES
		('net revenue', 'Quantity times unit price minus discount.', '{shop.orders,shop.order_items}')`)
	require.NoError(t, err)
	res, err = r.Retrieve(ctx, "What was our net revenue in June 2025?")
	require.NoError(t, err)
	got = chosenNames(res)
	require.Contains(t, got, "shop.orders")
	require.Contains(t, got, "shop.order_items")
	joined = false
	for _, jp := range res.JoinPaths {
		a, b := jp.From.Schema+"."+jp.From.Name, jp.To.Schema+"."+jp.To.Name
		if (a == "shop.order_items" && b == "shop.orders") || (a == "shop.orders" && b == "shop.order_items") {
			joined = true
		}
	}
	require.True(t, joined, "shop.order_items joins shop.orders: %v (chosen %v)", res.JoinPaths, got)
}

// Issue 10: a question whose time phrase ("last month") names no table.
// "month" used to match the finance.monthly_revenue view and a "one month"
// value of finance.expense_claims; bridging then connected the view through
// expense_claims and finance.currencies, and seven tables across three
// schemas were chosen. Relative time expressions are no schema evidence
// (relativeTime); other wordings of the same filter must not matter.
func TestDemoQuestionTimeWords(t *testing.T) {
	ctx, r, _ := sampleRetriever(t)
	for _, q := range []string{
		"How many tickets did each support agent resolve last month?",
		"How many tickets did each support agent resolve this year?",
		"How many tickets did each agent close in the past 30 days?",
	} {
		res, err := r.Retrieve(ctx, q)
		require.NoError(t, err)
		got := chosenNames(res)
		var why []string
		for _, rt := range res.Tables {
			if rt.Chosen {
				why = append(why, rt.Table.QualifiedName()+"("+joinReasons(rt.Reasons)+")")
			}
		}
		t.Logf("%s\n  chosen: %v", q, why)
		require.Contains(t, got, "support.tickets", q)
		require.Contains(t, got, "support.agents", q)
		for _, name := range got {
			require.False(t, strings.HasPrefix(name, "finance."), "%s: nothing from finance: %v", q, why)
		}
	}
}

// Questions in a user's words, not the schema's: every content word is a
// synonym or a near relation of a table's name. The vocabulary bridge has
// the tables among the candidates; rewriteToSchema lets the scorer see them
// as the named tables they are (before it, the first and last questions
// chose nothing at all, and the second nothing from shop).
func TestSampleQuestionsInOwnWords(t *testing.T) {
	ctx, r, _ := sampleRetriever(t)
	for _, tc := range []struct {
		question string
		want     []string
		rewrites map[string]string
	}{
		{"Which clients placed the most purchases?", []string{"shop.customers", "shop.orders"}, map[string]string{"clients": "customers"}},
		{"Which vendors supply the most merchandise?", []string{"shop.suppliers", "shop.products"}, map[string]string{"merchandise": "product"}},
		{"Which shoppers wrote the most critiques?", []string{"shop.customers", "shop.reviews"}, map[string]string{"critiques": "reviews"}},
	} {
		res, err := r.Retrieve(ctx, tc.question)
		require.NoError(t, err)
		got := chosenNames(res)
		t.Logf("%s: rewrites %v, chosen %v", tc.question, res.Rewrites, got)
		for _, w := range tc.want {
			require.Contains(t, got, w, tc.question)
		}
		said := map[string]string{}
		for _, rw := range res.Rewrites {
			said[rw.From] = rw.To
		}
		for from, to := range tc.rewrites {
			require.Equal(t, to, said[from], "%s: %q is said as", tc.question, from)
		}
		for _, rt := range res.Tables {
			if rt.Chosen && rt.Table.QualifiedName() == tc.want[1] {
				require.Contains(t, rt.Reasons, ReasonVocabulary, "%s: reasons of %s", tc.question, tc.want[1])
			}
		}
	}
}

// A word that is both a column's and a value's: "marketing" names
// shop.customers.marketing_opt_in and is the Marketing department, a job
// family, an account and a course title. Every value hit used to be chosen
// and then bridged to shop.customers, eleven tables in four schemas. Said
// in lower case it is the column; capitalised it is the department.
func TestSampleValueOrColumnWord(t *testing.T) {
	ctx, r, _ := sampleRetriever(t)

	res, err := r.Retrieve(ctx, "How many customers signed up for marketing e-mail?")
	require.NoError(t, err)
	require.Equal(t, []string{"shop.customers"}, chosenNames(res))

	res, err = r.Retrieve(ctx, "Which employees work in Marketing?")
	require.NoError(t, err)
	got := chosenNames(res)
	t.Logf("chosen %v", got)
	require.Contains(t, got, "hr.employees")
	valued := false
	for _, rt := range res.Tables {
		if rt.Chosen && rt.Table.Schema == "hr" && len(rt.Values) > 0 {
			valued = true
		}
	}
	require.True(t, valued, "an hr table chosen on the value Marketing: %v", got)
}

// TestSampleGoodIsNoProduct: Spider-Syn says "goods" for products, and the
// learned pair from it once read the adjective as a product too: "good
// tickets" chose shop.products, shop.inventory and shop.cart_items beside
// the support tables. The plural still means products.
func TestSampleGoodIsNoProduct(t *testing.T) {
	ctx, r, _ := sampleRetriever(t)
	got := chosenFor(ctx, t, r, "How many good tickets were closed last week?")
	require.Contains(t, got, "support.tickets")
	for _, name := range got {
		require.False(t, strings.HasPrefix(name, "shop."), "nothing from shop: %v", got)
	}
	require.Contains(t, chosenFor(ctx, t, r, "Which goods are out of stock?"), "shop.products")
}

// TestSampleShorthandNumbers: "100k" split as an identifier is 100 and a
// content word "k" that names nothing, which flattened the logits until
// the relative cut kept ten tables (every hr table with an employee_id);
// "24h" left a stray "h" and hid a relative time expression, which chose
// hr.performance_reviews and hr.employees beside the tickets. Each now
// asks what the same question spelled out asks.
func TestSampleShorthandNumbers(t *testing.T) {
	ctx, r, _ := sampleRetriever(t)
	got := chosenFor(ctx, t, r, "Which employees have a salary above 100k?")
	require.Equal(t, chosenFor(ctx, t, r, "Which employees have a salary above 100000?"), got)
	require.Contains(t, got, "hr.salaries")
	require.LessOrEqual(t, len(got), 3, "%v", got)

	got = chosenFor(ctx, t, r, "How many tickets were opened in the last 24h?")
	require.Equal(t, chosenFor(ctx, t, r, "How many tickets were opened in the last 24 hours?"), got)
	for _, name := range got {
		require.False(t, strings.HasPrefix(name, "hr."), "nothing from hr: %v", got)
	}
}

// TestSampleEmailAddress: an e-mail address is one value. Split into
// words, a customer's address matched employees and suppliers by first
// name and never the address itself (the value index holds it as one
// lexeme): "How many orders has <address> placed?" chose 8 tables, hr's
// among them, and "When did <address> sign up?" abstained. Now the
// address is the word "email" and a value found whole.
func TestSampleEmailAddress(t *testing.T) {
	ctx, r, pool := sampleRetriever(t)
	sampled := func(table string) string {
		var email string
		require.NoError(t, pool.QueryRow(ctx, `SELECT min(v.value) FROM atrium.value_index v
			JOIN atrium.tables t ON t.id = v.table_id
			WHERE t.schema_name || '.' || t.table_name = $1 AND v.column_name = 'email'`, table).Scan(&email))
		return email
	}
	customer := sampled("shop.customers")
	got := chosenFor(ctx, t, r, "How many orders has "+customer+" placed?")
	require.Contains(t, got, "shop.customers")
	require.Contains(t, got, "shop.orders")
	for _, name := range got {
		require.False(t, strings.HasPrefix(name, "hr."), "nothing from hr: %v", got)
	}
	require.Equal(t, []string{"shop.customers"}, chosenFor(ctx, t, r, "When did "+customer+" sign up?"))
	got = chosenFor(ctx, t, r, "What is the salary of "+sampled("hr.employees")+"?")
	require.Contains(t, got, "hr.salaries")
	require.NotContains(t, got, "shop.customers")
}

// TestSampleCodeLiteral: a tracking number or a supplier's SKU is found
// whole in the value index. Split into words with numbers left out of the
// value search, "COL0000095028" matched no value and "S1-000078" only
// the word "s".
func TestSampleCodeLiteral(t *testing.T) {
	ctx, r, pool := sampleRetriever(t)
	for _, c := range []struct{ table, column, question string }{
		{"shop.shipments", "tracking_number", "Where is shipment %s?"},
		{"shop.product_suppliers", "supplier_sku", "Which supplier has SKU %s?"},
	} {
		var v string
		require.NoError(t, pool.QueryRow(ctx, `SELECT min(v.value) FROM atrium.value_index v
			JOIN atrium.tables t ON t.id = v.table_id
			WHERE t.schema_name || '.' || t.table_name = $1 AND v.column_name = $2`, c.table, c.column).Scan(&v))
		res, err := r.Retrieve(ctx, fmt.Sprintf(c.question, v))
		require.NoError(t, err)
		var hit []ValueHit
		for _, tr := range res.Chosen() {
			if tr.Table.QualifiedName() == c.table {
				hit = tr.Values
			}
		}
		require.Contains(t, hit, ValueHit{Column: c.column, Value: v, Match: 1}, "%s: %v", c.question, chosenNames(res))
	}
}

// TestSamplePassingValueMention: "buyers" is one word of the course title
// "Negotiation Skills for Buyers"; that passing mention chose
// hr.training_courses for a question about customers' spending, and
// bridged hr.course_enrollments to it. Capitalised, the course name is
// still a value the question means.
func TestSamplePassingValueMention(t *testing.T) {
	ctx, r, _ := sampleRetriever(t)
	got := chosenFor(ctx, t, r, "Who are the top 10 buyers by lifetime spend?")
	require.Contains(t, got, "shop.customers")
	require.NotContains(t, got, "hr.training_courses")
	require.NotContains(t, got, "hr.course_enrollments")
	require.Contains(t, chosenFor(ctx, t, r, "Which employees took the Negotiation course?"), "hr.training_courses")
}

// TestSampleSharedValue: a currency or country code that every such
// column holds is weak evidence. "EUR" is in six tables' currency_code and
// "FR" in five tables' country codes; each hit used to count in full, and
// the exchange-rate question chose seven tables, two of them from hr.
func TestSampleSharedValue(t *testing.T) {
	ctx, r, _ := sampleRetriever(t)
	require.Equal(t, []string{"finance.exchange_rates"}, chosenFor(ctx, t, r, "What is the exchange rate from EUR to USD?"))
	require.Equal(t, []string{"shop.suppliers"}, chosenFor(ctx, t, r, "Which suppliers are based in FR?"))
}

// TestSampleGlossaryExplainsItsWords: a glossary term's words are
// accounted for by the term. "outstanding" is in hr.performance_reviews'
// rating comment ("5 (outstanding)"), and without the term that table was
// the only one chosen for "Total outstanding receivables"; with a term
// that names finance.invoices it is no evidence for another table. A word
// outside the term still is: "per customer" brings shop.customers.
func TestSampleGlossaryExplainsItsWords(t *testing.T) {
	ctx, r, pool := sampleRetriever(t)
	require.Equal(t, []string{"hr.performance_reviews"}, chosenFor(ctx, t, r, "Total outstanding receivables"))
	_, err := pool.Exec(ctx, `INSERT INTO atrium.glossary (term, definition, sql_fragment, tables) VALUES
		('outstanding receivables', 'Invoices issued and not yet paid.', 'paid_on IS NULL', '{finance.invoices}')`)
	require.NoError(t, err)
	require.Equal(t, []string{"finance.invoices"}, chosenFor(ctx, t, r, "Total outstanding receivables"))
	got := chosenFor(ctx, t, r, "Outstanding receivables per customer")
	require.Contains(t, got, "finance.invoices")
	require.Contains(t, got, "shop.customers")
	require.NotContains(t, got, "hr.performance_reviews")
}
