// Command retrieval benchmarks RETRIEVE latency.
//
// Synthetic (always): a catalog of --tables tables (default 100,000) is
// written straight into the atrium schema of a scratch database — table
// rows with builtin-embedder vectors, their columns, a value index and a
// join graph of foreign keys within each schema — because what is measured
// is retrieval, not catalog sync (catalog sync has its own tests and
// benchmarks). Then --questions questions are timed three ways, interleaved
// so machine noise hits all alike:
//
//   - reference: one plain top-k hybrid SQL query (k=10 by ts_rank_cd
//     union k=10 by cosine over HNSW), the floor any catalog-backed
//     retrieval pays;
//   - Retriever.Retrieve in process (hybrid candidates, ATR, expansion);
//   - `RETRIEVE <question>` sent by pgx through an Atrium proxy
//     (proxy.NewServer with the retriever's Handler) — the whole client path,
//     including the privilege check on the client's own connection.
//
// Spider (with --spider DIR): the dev databases are loaded and synced with
// catalog.Sync as `atrium eval` does, and every dev question is sent as
// RETRIEVE through the proxy; p50/p95 against the same references.
//
// Every figure is printed with its ratio to the reference measured in the
// same run; goals: synthetic p95 ≤ 100 ms, Spider p50 ≤ 10 ms and p95 ≤ 30 ms
// (a 2-core machine).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"

	"github.com/atriumdb/atrium/catalog"
	"github.com/atriumdb/atrium/catalog/benchload"
	"github.com/atriumdb/atrium/internal/ident"
	"github.com/atriumdb/atrium/migrations"
	"github.com/atriumdb/atrium/proxy"
	"github.com/atriumdb/atrium/question"
	"github.com/atriumdb/atrium/retriever"
	"github.com/atriumdb/atrium/retriever/vocab"
)

var commonWords = strings.Fields(`account address agent airport album artist asset balance bank batch bill book booking branch budget building campaign car card cargo carrier category channel city claim class client clinic club coach college company contract country course credit crew customer debt delivery department device diagnosis discount doctor document donor driver employee engine enrollment equipment event exam expense factory farm fee film flight fund game grade grant guest hotel household incident invoice item job journal lab lease lesson library license loan location machine manager market match meeting member message mission model movie museum network nurse office order owner package parcel partner patient payment performance permit phone player policy port position product project property purchase race rating region rental report request reservation resource restaurant result review route sale satellite schedule school season sensor server service session shipment shop singer site skill song sponsor staff station stock store student subject supplier survey tax teacher team tenant ticket tour track trade train transaction trip unit user vehicle vendor venue visit voter warehouse weather winner worker zone`)

// places are sampled values of the synthetic catalog's label columns, so
// questions that name one exercise the value index.
var places = strings.Fields(`Aberdeen Accra Adelaide Almaty Amman Ankara Antwerp Asuncion Athens Auckland Baku Bamako Bergen Bilbao Bogota Bologna Bordeaux Bremen Brisbane Bristol Bruges Brno Bucharest Cairo Calgary Cardiff Cordoba Cork Dakar Dhaka Dijon Dublin Dundee Durban Erfurt Essen Faro Fresno Galway Gdansk Geneva Genoa Ghent Girona Glasgow Graz Hanoi Harare Havana Helsinki Hobart Houston Innsbruck Izmir Jaipur Kampala Kaunas Kazan Kiel Kyoto Lagos Leeds Leipzig Lima Linz Lisbon Lyon Madras Malaga Malmo Manila Marseille Medan Minsk Mombasa Montreal Munich Murcia Nagoya Nairobi Nantes Naples Nice Odessa Oporto Osaka Oslo Ottawa Oulu Oviedo Padua Palermo Perth Porto Quito Riga Rouen Salta Seville Sofia Split Tampere Tartu Toledo Toulouse Turin Utrecht Valencia Varna Vienna Vigo Vilnius Warsaw Windhoek Wuhan Yerevan Zagreb Zurich`)

func main() {
	tables := flag.Int("tables", 100000, "synthetic catalog size")
	questions := flag.Int("questions", 300, "synthetic questions timed")
	dsn := flag.String("dsn", benchload.DefaultServerDSN, "PostgreSQL server; scratch databases atrium_bench_retrieval and atrium_bench_spider are (re)created there and dropped")
	window := flag.Int("atr-window", 10, "ATR window on the synthetic catalog (10/5 suits very large catalogs)")
	retain := flag.Int("atr-retain", 5, "ATR retention on the synthetic catalog")
	spider := flag.String("spider", "", "Spider benchmark directory: also time every dev question through the proxy")
	keep := flag.Bool("keep-db", false, "keep the scratch databases")
	reuse := flag.Bool("reuse-db", false, "reuse the synthetic catalog a --keep-db run left behind when it has the same --tables and --vocab (skips the build; implies --keep-db)")
	vocabMode := flag.String("vocab", "zipf", "synthetic names: zipf (a long-tailed vocabulary of 20,000 words, the 200 common ones at its head; questions name words of one table) or common (every name from 200 common words: each question word matches thousands of tables, a worst case for full-text ranking)")
	embKind := flag.String("embedder", vocab.DefaultEmbedderKind, "embedder of both catalogs and their questions: words or builtin")
	flag.Parse()
	ctx := context.Background()
	if *vocabMode != "zipf" && *vocabMode != "common" {
		fmt.Fprintln(os.Stderr, "bench: --vocab must be zipf or common")
		os.Exit(2)
	}
	emb, err := vocab.NewEmbedder(catalog.EmbedderConfig{Kind: *embKind})
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	vemb, ok := emb.(vectorEmbedder)
	if !ok {
		fmt.Fprintf(os.Stderr, "bench: --embedder %s: only the built-in embedders (words, builtin) are supported\n", *embKind)
		os.Exit(2)
	}
	b := &bench{server: *dsn, keep: *keep, reuse: *reuse, zipf: *vocabMode == "zipf", emb: vemb}
	if err := b.synthetic(ctx, *tables, *questions, *window, *retain); err != nil {
		fmt.Fprintln(os.Stderr, "bench: synthetic:", err)
		os.Exit(1)
	}
	if *spider != "" {
		if err := b.spider(ctx, *spider); err != nil {
			fmt.Fprintln(os.Stderr, "bench: spider:", err)
			os.Exit(1)
		}
	}
}

type bench struct {
	server string
	keep   bool
	reuse  bool
	zipf   bool
	emb    vectorEmbedder
}

// vectorEmbedder is a built-in embedder: the synthetic catalog is written
// directly, one vector per table, without a sync.
type vectorEmbedder interface {
	catalog.Embedder
	Vector(text string) []float32
}

// lexicon draws the words of synthetic names.
type lexicon struct {
	words []string
	zipf  *rand.Zipf
	rng   *rand.Rand
}

// newLexicon returns the common vocabulary drawn uniformly, or (zipf) a
// vocabulary of the common words followed by 20,000 generated ones drawn
// with Zipf's law (s = 1.1), as names in large catalogs are.
func newLexicon(rng *rand.Rand, zipf bool) *lexicon {
	l := &lexicon{words: commonWords, rng: rng}
	if zipf {
		syl := strings.Fields("ba be bi bo bu da de di do du ka ke ki ko ku la le li lo lu ma me mi mo mu na ne ni no nu ra re ri ro ru sa se si so su ta te ti to tu va ve vi vo vu")
		words := append([]string(nil), commonWords...)
		for i := 0; len(words) < len(commonWords)+20000; i++ {
			words = append(words, syl[i%len(syl)]+syl[(i/len(syl))%len(syl)]+syl[(i/(len(syl)*len(syl)))%len(syl)]+"n")
		}
		l.words = words
		l.zipf = rand.NewZipf(rng, 1.1, 8, uint64(len(words)-1))
	}
	return l
}

func (l *lexicon) word() string {
	if l.zipf != nil {
		return l.words[l.zipf.Uint64()]
	}
	return l.words[l.rng.IntN(len(l.words))]
}

// synthTable is what questions about a synthetic table may name.
type synthTable struct {
	qualified string
	words     []string
}

// scratch (re)creates database name and returns its DSN and a drop function.
// With reuse, an existing database is kept as it is and existed says so,
// and drop keeps it for the next run.
func (b *bench) scratch(ctx context.Context, name string, reuse bool) (dsn string, drop func(), existed bool, err error) {
	admin, err := pgx.Connect(ctx, b.server)
	if err != nil {
		return "", nil, false, err
	}
	defer admin.Close(context.Background())
	id := pgx.Identifier{name}.Sanitize()
	if reuse {
		if err := admin.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&existed); err != nil {
			return "", nil, false, err
		}
	}
	if !existed {
		if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+id+" WITH (FORCE)"); err != nil {
			return "", nil, false, err
		}
		if _, err := admin.Exec(ctx, "CREATE DATABASE "+id); err != nil {
			return "", nil, false, err
		}
	}
	cfg := admin.Config()
	dsn = fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable", cfg.User, net.JoinHostPort(cfg.Host, fmt.Sprint(cfg.Port)), name)
	drop = func() {
		if b.keep || reuse {
			return
		}
		c, err := pgx.Connect(context.Background(), b.server)
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		_, _ = c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+id+" WITH (FORCE)")
	}
	return dsn, drop, existed, nil
}

func (b *bench) synthetic(ctx context.Context, n, nq, W, R int) error {
	dsn, drop, existed, err := b.scratch(ctx, "atrium_bench_retrieval", b.reuse)
	if err != nil {
		return err
	}
	defer drop()
	pool, err := retriever.OpenPool(ctx, dsn, 100, nil)
	if err != nil {
		return err
	}
	defer pool.Close()
	emb := b.emb
	start := time.Now()
	syn := generateSynthetic(emb, n, b.zipf)
	tables := syn.tables
	mode := "common 200-word vocabulary"
	if b.zipf {
		mode = "Zipf vocabulary of 20,200 words"
	}
	if existed {
		if err := syn.check(ctx, pool); err != nil {
			return fmt.Errorf("--reuse-db: %w; run without --reuse-db to rebuild", err)
		}
		fmt.Printf("synthetic catalog (%s): %d tables, %d join edges, reused from a previous run\n", mode, n, len(syn.edges))
	} else {
		if err := syn.write(ctx, pool); err != nil {
			return err
		}
		fmt.Printf("synthetic catalog (%s): %d tables, %d join edges, written directly into the atrium schema in %s\n",
			mode, n, len(syn.edges), time.Since(start).Round(time.Second))
	}

	r, err := retriever.New(pool, retriever.Config{Window: W, Retain: R}, retriever.Options{Embedder: emb})
	if err != nil {
		return err
	}
	addr, stop, err := startProxy(ctx, b.server, retrieveHandler(r))
	if err != nil {
		return err
	}
	defer stop()
	client, err := connectVia(ctx, addr, dsn)
	if err != nil {
		return err
	}
	defer client.Close(context.Background())

	rng := rand.New(rand.NewPCG(7, 11))
	word := func() string { return commonWords[rng.IntN(len(commonWords))] }
	qs := make([]string, nq)
	var targets []string // the table each question was drawn from (zipf only)
	if b.zipf {
		targets = make([]string, nq)
	}
	for i := range qs {
		if b.zipf {
			// A question about one table, naming three of its words.
			t := tables[rng.IntN(len(tables))]
			w := func() string { return t.words[rng.IntN(len(t.words))] }
			targets[i] = t.qualified
			qs[i] = fmt.Sprintf("which %s have the most %s per %s", w(), w(), w())
			continue
		}
		switch i % 3 {
		case 0:
			qs[i] = fmt.Sprintf("which %ss have the most %s per %s", word(), word(), word())
		case 1:
			qs[i] = fmt.Sprintf("list every %s of %s in %s with its %s", word(), word(), places[rng.IntN(len(places))], word())
		default:
			qs[i] = fmt.Sprintf("average %s %s by %s and %s for each %s", word(), word(), word(), word(), word())
		}
	}
	ref := &hybridRef{emb: emb, k: 10}
	m, err := measure(ctx, qs, targets, pool, r, client, ref)
	if err != nil {
		return err
	}
	m.print(fmt.Sprintf("synthetic %d tables (W=%d, R=%d), %d questions", n, W, R, nq), "synthetic RETRIEVE p95 <= 100 ms")
	return nil
}

// synthCatalog is the synthetic catalog's rows, generated deterministically.
type synthCatalog struct {
	emb                   vectorEmbedder
	tables                []synthTable
	tableRows, cols, vals [][]any
	edges                 [][]any
}

// check verifies that a reused database holds this catalog: same table
// count and the same first and last tables.
func (s *synthCatalog) check(ctx context.Context, pool *pgxpool.Pool) error {
	var count int
	var first, last, embedder string
	err := pool.QueryRow(ctx, `SELECT count(*),
		(SELECT schema_name || '.' || table_name FROM atrium.tables ORDER BY id LIMIT 1),
		(SELECT schema_name || '.' || table_name FROM atrium.tables ORDER BY id DESC LIMIT 1),
		(SELECT embedder FROM atrium.catalog_state)
		FROM atrium.tables`).Scan(&count, &first, &last, &embedder)
	if err != nil {
		return fmt.Errorf("read the reused catalog: %w", err)
	}
	if count != len(s.tables) || first != s.tables[0].qualified || last != s.tables[len(s.tables)-1].qualified {
		return fmt.Errorf("the kept database holds another catalog (%d tables)", count)
	}
	if embedder != s.emb.Name() {
		return fmt.Errorf("the kept catalog was embedded by %s, not %s", embedder, s.emb.Name())
	}
	return nil
}

// generateSynthetic draws n tables, their columns, values and join edges.
func generateSynthetic(emb vectorEmbedder, n int, zipf bool) *synthCatalog {
	rng := rand.New(rand.NewPCG(1, 2))
	word := newLexicon(rng, zipf).word
	var synth []synthTable
	var tables, cols, vals, edges [][]any
	for i := 0; i < n; i++ {
		id := int64(i + 1)
		schema := fmt.Sprintf("app_%04d", i/50)
		name := word() + "_" + word()
		if rng.IntN(2) == 0 {
			name = word() + "s"
		}
		name = fmt.Sprintf("%s_%d", name, i)
		colNames := []string{"id", "label"}
		for c := 0; c < 4+rng.IntN(10); c++ {
			colNames = append(colNames, word()+"_"+word())
		}
		var labels []string
		for len(labels) < 3 {
			if l := places[rng.IntN(len(places))]; !slices.Contains(labels, l) {
				labels = append(labels, l)
			}
		}
		if i%50 != 0 {
			colNames = append(colNames, "ref_id")
			to := int64(i/50*50 + rng.IntN(i%50) + 1)
			edges = append(edges, []any{id, []string{"ref_id"}, to, []string{"id"}, "foreign_key", float32(1)})
		}
		for p, c := range colNames {
			typ, samples := "integer", []string{}
			switch {
			case c == "label":
				typ, samples = "text", labels
			case c != "id" && c != "ref_id":
				typ = "numeric"
			}
			cols = append(cols, []any{id, int32(p + 1), c, typ, c == "id", c == "id", c == "id", samples})
		}
		for _, l := range labels {
			vals = append(vals, []any{id, "label", l})
		}
		nameText := ident.Words(schema) + " " + ident.Words(name) + " " + ident.Words(strings.Join(colNames, " "))
		doc := schema + "." + name + ": " + strings.Join(colNames, ", ") + "; label: " + strings.Join(labels, " | ")
		st := synthTable{qualified: schema + "." + name}
		for _, c := range append([]string{name}, colNames[2:]...) {
			for _, w := range strings.Split(c, "_") {
				if w != "" && w != "id" && (w[0] < '0' || w[0] > '9') {
					st.words = append(st.words, w)
				}
			}
		}
		synth = append(synth, st)
		tables = append(tables, []any{id, schema, name, "table", nameText, strings.Join(labels, " "), doc,
			pgvector.NewVector(emb.Vector(doc)), int32(len(colNames)), int64(1000 + rng.IntN(100000))})
	}
	return &synthCatalog{emb: emb, tables: synth, tableRows: tables, cols: cols, vals: vals, edges: edges}
}

// write puts the catalog into the atrium schema. Indexes are dropped during
// the COPY and rebuilt afterwards, as a bulk load would.
func (s *synthCatalog) write(ctx context.Context, pool *pgxpool.Pool) error {
	if _, err := migrations.Up(ctx, pool, migrations.Options{}); err != nil {
		return err
	}
	// An empty sync types the embedding columns for the builtin embedder
	// and records it in catalog_state.
	if _, err := catalog.Sync(ctx, pool, catalog.SyncOptions{Embedder: s.emb, Schemas: []string{"no_such_schema"}, Logger: slog.New(slog.DiscardHandler)}); err != nil {
		return err
	}
	if _, err := pool.Exec(ctx, `DROP INDEX IF EXISTS atrium.tables_embedding_hnsw_idx, atrium.tables_tsv_idx, atrium.tables_name_trgm_idx,
		atrium.value_index_tsv_idx, atrium.value_index_trgm_idx`); err != nil {
		return err
	}
	tables, cols, vals, edges := s.tableRows, s.cols, s.vals, s.edges
	copies := []struct {
		table string
		cols  []string
		rows  [][]any
	}{
		{"tables", []string{"id", "schema_name", "table_name", "kind", "name_text", "value_text", "document", "embedding", "column_count", "est_rows"}, tables},
		{"columns", []string{"table_id", "position", "column_name", "data_type", "is_primary_key", "is_unique", "not_null", "sample_values"}, cols},
		{"value_index", []string{"table_id", "column_name", "value"}, vals},
		{"join_edges", []string{"from_table_id", "from_columns", "to_table_id", "to_columns", "source", "score"}, edges},
	}
	for _, c := range copies {
		if _, err := pool.CopyFrom(ctx, pgx.Identifier{"atrium", c.table}, c.cols, pgx.CopyFromRows(c.rows)); err != nil {
			return fmt.Errorf("copy %s: %w", c.table, err)
		}
	}
	for _, ddl := range []string{
		"SET maintenance_work_mem = '512MB'",
		"CREATE INDEX tables_tsv_idx ON atrium.tables USING gin (tsv)",
		"CREATE INDEX tables_name_trgm_idx ON atrium.tables USING gin (table_name gin_trgm_ops)",
		"CREATE INDEX value_index_tsv_idx ON atrium.value_index USING gin (tsv)",
		"CREATE INDEX value_index_trgm_idx ON atrium.value_index USING gin (value gin_trgm_ops)",
		"CREATE INDEX tables_embedding_hnsw_idx ON atrium.tables USING hnsw (embedding vector_cosine_ops)",
		"SELECT setval(pg_get_serial_sequence('atrium.tables', 'id'), (SELECT max(id) FROM atrium.tables))",
		"ANALYZE atrium.tables, atrium.columns, atrium.value_index, atrium.join_edges",
		"UPDATE atrium.catalog_state SET version = version + 1, updated_at = now()",
	} {
		if _, err := pool.Exec(ctx, ddl); err != nil {
			return fmt.Errorf("%s: %w", ddl, err)
		}
	}
	return nil
}

// hybridRef is the reference: a plain top-k hybrid query, the k best by
// full-text rank and the k nearest by cosine, in one statement.
type hybridRef struct {
	emb vectorEmbedder
	k   int
}

const hybridRefSQL = `
WITH q AS (SELECT to_tsquery('english', $1) AS q),
lex AS (SELECT t.id FROM atrium.tables t, q WHERE t.tsv @@ q.q ORDER BY ts_rank_cd(t.tsv, q.q) DESC LIMIT $3),
sem AS (SELECT t.id FROM atrium.tables t ORDER BY t.embedding <=> $2 LIMIT $3)
SELECT t.schema_name, t.table_name FROM atrium.tables t WHERE t.id IN (SELECT id FROM lex UNION SELECT id FROM sem)`

func (h *hybridRef) run(ctx context.Context, pool *pgxpool.Pool, question string) error {
	var terms []string
	for _, w := range ident.Split(question) {
		terms = append(terms, "'"+strings.ReplaceAll(w, "'", "")+"'")
	}
	rows, err := pool.Query(ctx, hybridRefSQL, strings.Join(terms, " | "), pgvector.NewVector(h.emb.Vector(question)), h.k)
	if err != nil {
		return err
	}
	rows.Close()
	return rows.Err()
}

// startProxy serves an Atrium proxy in front of the server of serverDSN on
// a loopback port with handler.
func startProxy(ctx context.Context, serverDSN string, handler proxy.Handler) (string, func(), error) {
	cc, err := pgx.ParseConfig(serverDSN)
	if err != nil {
		return "", nil, err
	}
	srv, err := proxy.NewServer(proxy.Config{
		Upstream:        net.JoinHostPort(cc.Host, fmt.Sprint(cc.Port)),
		UpstreamSSLMode: "disable",
	}, proxy.Options{Handler: proxy.Handlers{handler}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return "", nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sctx, l) }()
	stop := func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, proxy.ErrServerClosed) {
			fmt.Fprintln(os.Stderr, "bench: proxy:", err)
		}
	}
	return l.Addr().String(), stop, nil
}

// connectVia connects to the database of dsn through the proxy at addr with
// the simple protocol, as psql does.
func connectVia(ctx context.Context, addr, dsn string) (*pgx.Conn, error) {
	cc, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	host, port, _ := net.SplitHostPort(addr)
	return pgx.Connect(ctx, fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable&default_query_exec_mode=simple_protocol",
		cc.User, net.JoinHostPort(host, port), cc.Database))
}

// measurement holds the latencies of one run.
type measurement struct {
	ref, select1, inproc, proxied []time.Duration
	chosen                        int
	// found counts questions whose target table was chosen (when the
	// questions have targets).
	found, targeted int
}

// measure times every question once per path, interleaved. The first
// question warms caches (catalog snapshot, plans) and is not counted.
func measure(ctx context.Context, qs, targets []string, pool *pgxpool.Pool, r *retriever.Retriever, client *pgx.Conn, ref *hybridRef) (*measurement, error) {
	m := &measurement{}
	for i, q := range qs {
		t := time.Now()
		if err := ref.run(ctx, pool, q); err != nil {
			return nil, fmt.Errorf("reference query: %w", err)
		}
		dRef := time.Since(t)

		t = time.Now()
		if _, err := client.Exec(ctx, "SELECT 1"); err != nil {
			return nil, fmt.Errorf("SELECT 1 through the proxy: %w", err)
		}
		dSel := time.Since(t)

		t = time.Now()
		res, err := r.Retrieve(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("retrieve %q: %w", q, err)
		}
		dIn := time.Since(t)

		t = time.Now()
		rows, err := client.Query(ctx, retrieveSQL(q))
		if err != nil {
			return nil, fmt.Errorf("RETRIEVE through the proxy: %w", err)
		}
		for rows.Next() {
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("RETRIEVE %q through the proxy: %w", q, err)
		}
		dProx := time.Since(t)
		if i == 0 {
			continue
		}
		m.ref = append(m.ref, dRef)
		m.select1 = append(m.select1, dSel)
		m.inproc = append(m.inproc, dIn)
		m.proxied = append(m.proxied, dProx)
		m.chosen += len(res.Chosen())
		if targets != nil {
			m.targeted++
			for _, c := range res.Chosen() {
				if c.Table.QualifiedName() == targets[i] {
					m.found++
					break
				}
			}
		}
	}
	return m, nil
}

func pct(d []time.Duration, q float64) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s) == 0 {
		return 0
	}
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/1e6) }

func (m *measurement) print(title, goal string) {
	fmt.Printf("\n%s (%d timed; %.1f tables chosen on average)\n", title, len(m.inproc), float64(m.chosen)/float64(max(len(m.inproc), 1)))
	fmt.Printf("  %-44s %10s %10s %12s\n", "path", "p50", "p95", "p95 / ref")
	refP95 := pct(m.ref, 0.95)
	for _, row := range []struct {
		name string
		d    []time.Duration
	}{
		{"reference: plain top-10 hybrid SQL (pgxpool)", m.ref},
		{"SELECT 1 through the proxy", m.select1},
		{"Retriever.Retrieve in process", m.inproc},
		{"RETRIEVE through the proxy (pgx, simple)", m.proxied},
	} {
		fmt.Printf("  %-44s %10s %10s %11.2fx\n", row.name, ms(pct(row.d, 0.5)), ms(pct(row.d, 0.95)), float64(pct(row.d, 0.95))/float64(refP95))
	}
	if m.targeted > 0 {
		fmt.Printf("  the table a question was generated from was chosen for %d of %d questions\n", m.found, m.targeted)
	}
	fmt.Printf("  goal: %s\n", goal)
}

// spider loads the Spider dev databases, syncs their catalog and times every
// dev question as RETRIEVE through the proxy.
func (b *bench) spider(ctx context.Context, dir string) error {
	bench, err := benchload.LoadBench(dir, "")
	if err != nil {
		return err
	}
	dsn, drop, _, err := b.scratch(ctx, "atrium_bench_spider", false)
	if err != nil {
		return err
	}
	defer drop()
	pool, err := retriever.OpenPool(ctx, dsn, 100, nil)
	if err != nil {
		return err
	}
	defer pool.Close()
	if _, err := migrations.Up(ctx, pool, migrations.Options{}); err != nil {
		return err
	}
	start := time.Now()
	if _, err := benchload.Load(ctx, pool, dir, benchload.Options{}); err != nil {
		return fmt.Errorf("load %s: %w", dir, err)
	}
	emb := b.emb
	if _, err := catalog.Sync(ctx, pool, catalog.SyncOptions{Embedder: emb}); err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	fmt.Printf("\nSpider dev catalog loaded and synced (catalog.Sync) in %s\n", time.Since(start).Round(time.Second))
	r, err := retriever.New(pool, retriever.Config{}, retriever.Options{Embedder: emb})
	if err != nil {
		return err
	}
	addr, stop, err := startProxy(ctx, b.server, retrieveHandler(r))
	if err != nil {
		return err
	}
	defer stop()
	client, err := connectVia(ctx, addr, dsn)
	if err != nil {
		return err
	}
	defer client.Close(context.Background())
	qs := make([]string, len(bench.Questions))
	for i, q := range bench.Questions {
		qs[i] = q.Question
	}
	m, err := measure(ctx, qs, nil, pool, r, client, &hybridRef{emb: emb, k: 10})
	if err != nil {
		return err
	}
	m.print(fmt.Sprintf("Spider dev, %d questions (W=20, R=15)", len(qs)), "Spider RETRIEVE p50 <= 10 ms, p95 <= 30 ms")
	return nil
}

// retrieveSQL is the RETRIEVE statement a client sends for q: quoted when
// q holds a semicolon, which would otherwise end the statement (one Spider
// dev question does: "... in each shop; show the shop name as well.").
func retrieveSQL(q string) string {
	if strings.Contains(q, ";") {
		return "RETRIEVE '" + strings.ReplaceAll(q, "'", "''") + "'"
	}
	return "RETRIEVE " + q
}

// retrieveHandler is the question layer over r, as atrium serve builds it
// (without an LLM: only RETRIEVE is asked here).
func retrieveHandler(r *retriever.Retriever) proxy.Handler {
	h, err := question.New(question.Config{}, question.Options{Retriever: r})
	if err != nil {
		panic(err) // only a nil Retriever fails
	}
	return h
}
