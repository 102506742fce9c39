package retriever

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/atriumdb/atrium/internal/ident"
	"github.com/atriumdb/atrium/retriever/vocab"
)

// TableInfo is what the retriever knows about one catalog table: enough to
// score it and to prompt an LLM with it.
type TableInfo struct {
	ID      int64
	Schema  string
	Name    string
	Kind    string
	Comment string
	Purpose string
	EstRows int64
	Columns []ColumnInfo

	// Derived once when loaded; read-only afterwards.
	nameA analyzed
	colA  []analyzed
	// colStems are the stems of the column names and of every comment and
	// description documenting the table or its columns: a column named
	// cust_cntry documented as "customer country" names both words.
	colStems map[string]bool
	comA     analyzed
	// docA is the table's own comment and purpose, which describe the
	// table as its name does.
	docA analyzed
	// own is ownStems' answer, read-only once prepared.
	own map[string]bool
	// ownExp are the stems the name's and the non-key columns' identifier
	// tokens expand to at weight minOwnExpansion or more (cust →
	// customer), aggregate words left out: what the abstention coverage
	// counts as named beside own, as the candidate stage and the scorer
	// already read those expansions.
	ownExp map[string]bool
	// nameExp and colExp are the stems the vocabulary expands the name's
	// and the columns' identifier tokens to (cust → customer), with
	// weights below 1.
	nameExp, colExp map[string]float64
	// softName and softCols are softMatch's words of the name and of the
	// non-key columns, their vector positions resolved in softEmb.
	softName, softCols []softWord
	softEmb            *vocab.Embeddings
}

// ColumnInfo is one column of a catalog table.
type ColumnInfo struct {
	Name         string
	Type         string
	Comment      string
	Description  string
	PrimaryKey   bool
	Unique       bool
	NotNull      bool
	SampleValues []string
}

// QualifiedName is schema.table.
func (t *TableInfo) QualifiedName() string { return t.Schema + "." + t.Name }

func (t *TableInfo) prepare(expand func(string) []weightedTerm, emb *vocab.Embeddings) {
	t.nameA = analyzeIdent(t.Name, expand)
	t.nameExp, t.colExp = map[string]float64{}, map[string]float64{}
	addExp := func(m map[string]float64, words []string) {
		if expand == nil {
			return
		}
		for _, w := range words {
			for _, e := range expand(w) {
				if s := stem(e.term); e.weight > m[s] {
					m[s] = e.weight
				}
			}
		}
	}
	addExp(t.nameExp, t.nameA.words)
	t.colStems = map[string]bool{}
	t.colA = make([]analyzed, len(t.Columns))
	var com strings.Builder
	com.WriteString(t.Comment)
	com.WriteString(" ")
	com.WriteString(t.Purpose)
	for i, c := range t.Columns {
		t.colA[i] = analyzeIdent(c.Name, expand)
		addExp(t.colExp, t.colA[i].words)
		for s := range t.colA[i].set {
			t.colStems[s] = true
		}
		com.WriteString(" ")
		com.WriteString(c.Comment)
		com.WriteString(" ")
		com.WriteString(c.Description)
	}
	t.comA = analyze(com.String(), true)
	// Documentation counts as the columns' words for every feature and
	// coverage rule: real schemas with terse identifiers are often
	// documented, and the scorer was trained on schemas without comments,
	// so evidence that reaches it only through a comment-only slot would
	// reach it untrained (docs/retrieval.md, step 13).
	for _, s := range t.comA.stems {
		t.colStems[s] = true
	}
	t.docA = analyze(t.Comment+" "+t.Purpose, true)
	t.own = buildOwnStems(t)
	t.ownExp = buildOwnExpansions(t, expand)
	t.softName, t.softCols = softTableWords(t.nameA, t.colA, emb)
	t.softEmb = emb
}

// analyzeIdent analyzes an identifier, reading a token PostgreSQL folded
// run together (customername) as the words expand recovers from it. The
// token's own stem stays in the set as an alias: a question that repeats
// a jargon token the vocabulary happened to read as words (tubeban as
// "tube ban") still matches it.
func analyzeIdent(name string, expand func(string) []weightedTerm) analyzed {
	words := ident.Split(name)
	if expand == nil {
		return analyzeWords(words, false, nil)
	}
	out := words[:0:0]
	var folded []string
	for _, w := range words {
		n := len(out)
		for _, e := range expand(w) {
			if e.part {
				out = append(out, e.term)
			}
		}
		if len(out) == n {
			out = append(out, w)
		} else {
			folded = append(folded, w)
		}
	}
	a := analyzeWords(out, false, nil)
	for _, w := range folded {
		a.set[stem(w)] = true
	}
	return a
}

// JoinEdge is one edge of the catalog join graph, oriented from the
// referencing table to the referenced one.
type JoinEdge struct {
	From, To         int64
	FromCols, ToCols []string
	Source           string // foreign_key or inferred
	Score            float64
}

// graph is the catalog's join graph for one catalog version. Immutable.
type graph struct {
	adj map[int64][]*JoinEdge // both directions reference the same edge
	// best[a][b] is the highest-scoring edge between a and b.
	best map[[2]int64]*JoinEdge
	// schemaGroup maps a schema that a declared foreign key connects to
	// another schema to the group's name (its schemas joined by "+");
	// schemas without such keys are absent.
	schemaGroup map[string]string
}

func (g *graph) edge(a, b int64) *JoinEdge {
	if a > b {
		a, b = b, a
	}
	return g.best[[2]int64{a, b}]
}

// compat is CORE-T's table compatibility: the best edge score between two
// tables, 0 when they do not join.
func (g *graph) compat(a, b int64) float64 {
	if e := g.edge(a, b); e != nil {
		return e.Score
	}
	return 0
}

// snapshot is the static part of the catalog for one version: the join graph
// and a cache of table metadata filled on demand. Shared by concurrent
// retrievals.
type snapshot struct {
	version   int64
	embedder  string
	dimension int
	g         *graph
	// expand is the vocabulary's identifier expansion applied to tables
	// as they are loaded.
	expand func(string) []weightedTerm
	// emb are the word vectors softMatch's table words are resolved in.
	emb *vocab.Embeddings

	mu struct {
		sync.Mutex
		tables map[int64]*TableInfo
	}
}

// maxCachedTables bounds the metadata cache of one snapshot; beyond it the
// cache is dropped and refilled (huge catalogs touch few tables per query).
const maxCachedTables = 200_000

// ErrCatalogNotBuilt reports that the catalog schema or its contents do not
// exist yet.
var ErrCatalogNotBuilt = errors.New("the Atrium catalog is not built yet: run `atrium migrate` and `atrium catalog sync` first")

// catalogState reads the catalog version and embedder.
func catalogState(ctx context.Context, db *pgxpool.Pool) (version int64, embedder string, dim int, err error) {
	err = db.QueryRow(ctx, `SELECT version, embedder, dimension FROM atrium.catalog_state`).Scan(&version, &embedder, &dim)
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && (pe.Code == "42P01" || pe.Code == "3F000") {
			return 0, "", 0, ErrCatalogNotBuilt
		}
		if errors.Is(err, pgx.ErrNoRows) {
			return 0, "", 0, ErrCatalogNotBuilt
		}
		return 0, "", 0, fmt.Errorf("read catalog state: %w", err)
	}
	return version, embedder, dim, nil
}

func loadGraph(ctx context.Context, db *pgxpool.Pool) (*graph, error) {
	rows, err := db.Query(ctx, `
SELECT e.from_table_id, e.from_columns, e.to_table_id, e.to_columns, e.source, e.score, f.schema_name, t.schema_name
FROM atrium.join_edges e
JOIN atrium.tables f ON f.id = e.from_table_id
JOIN atrium.tables t ON t.id = e.to_table_id
ORDER BY e.id`)
	if err != nil {
		return nil, fmt.Errorf("load join graph: %w", err)
	}
	g := &graph{adj: map[int64][]*JoinEdge{}, best: map[[2]int64]*JoinEdge{}}
	// Union-find over schemas linked by declared foreign keys (inferred
	// edges guess from names and may link unrelated databases).
	parent := map[string]string{}
	var find func(string) string
	find = func(s string) string {
		p, ok := parent[s]
		if !ok || p == s {
			return s
		}
		r := find(p)
		parent[s] = r
		return r
	}
	for rows.Next() {
		e := &JoinEdge{}
		var score float32
		var fromSchema, toSchema string
		if err := rows.Scan(&e.From, &e.FromCols, &e.To, &e.ToCols, &e.Source, &score, &fromSchema, &toSchema); err != nil {
			rows.Close()
			return nil, fmt.Errorf("load join graph: %w", err)
		}
		if e.Source == "foreign_key" && fromSchema != toSchema {
			a, b := find(fromSchema), find(toSchema)
			parent[a], parent[b] = a, a
			if a != b {
				parent[b] = a
			}
		}
		e.Score = float64(score)
		if e.From == e.To {
			continue // self-joins never connect two tables
		}
		g.adj[e.From] = append(g.adj[e.From], e)
		g.adj[e.To] = append(g.adj[e.To], e)
		a, b := e.From, e.To
		if a > b {
			a, b = b, a
		}
		if old := g.best[[2]int64{a, b}]; old == nil || e.Score > old.Score || (e.Score == old.Score && e.Source == "foreign_key" && old.Source != "foreign_key") {
			g.best[[2]int64{a, b}] = e
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load join graph: %w", err)
	}
	members := map[string][]string{}
	for s := range parent {
		r := find(s)
		members[r] = append(members[r], s)
	}
	g.schemaGroup = map[string]string{}
	for _, ms := range members {
		sort.Strings(ms)
		name := strings.Join(ms, "+")
		for _, s := range ms {
			g.schemaGroup[s] = name
		}
	}
	// Deterministic neighbour order for BFS.
	for id, es := range g.adj {
		sort.SliceStable(es, func(i, j int) bool { return other(es[i], id) < other(es[j], id) })
	}
	return g, nil
}

func other(e *JoinEdge, id int64) int64 {
	if e.From == id {
		return e.To
	}
	return e.From
}

// tables returns metadata for ids, loading the missing ones in one query.
func (s *snapshot) tables(ctx context.Context, db *pgxpool.Pool, ids []int64) (map[int64]*TableInfo, error) {
	out := make(map[int64]*TableInfo, len(ids))
	var missing []int64
	s.mu.Lock()
	for _, id := range ids {
		if t, ok := s.mu.tables[id]; ok {
			out[id] = t
		} else {
			missing = append(missing, id)
		}
	}
	s.mu.Unlock()
	if len(missing) == 0 {
		return out, nil
	}
	loaded, err := loadTables(ctx, db, missing, s.expand, s.emb)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if len(s.mu.tables)+len(loaded) > maxCachedTables {
		s.mu.tables = map[int64]*TableInfo{}
	}
	for id, t := range loaded {
		s.mu.tables[id] = t
		out[id] = t
	}
	s.mu.Unlock()
	return out, nil
}

// loadTables reads tables with their columns. Column sample values come with
// them because the SQL prompt shows them.
func loadTables(ctx context.Context, db *pgxpool.Pool, ids []int64, expand func(string) []weightedTerm, emb *vocab.Embeddings) (map[int64]*TableInfo, error) {
	rows, err := db.Query(ctx, `
SELECT t.id, t.schema_name, t.table_name, t.kind, coalesce(t.comment, ''), coalesce(t.purpose, ''), t.est_rows,
       coalesce(array_agg(c.column_name ORDER BY c.position) FILTER (WHERE c.column_name IS NOT NULL), '{}'),
       coalesce(array_agg(c.data_type ORDER BY c.position) FILTER (WHERE c.column_name IS NOT NULL), '{}'),
       coalesce(array_agg(coalesce(c.comment, '') ORDER BY c.position) FILTER (WHERE c.column_name IS NOT NULL), '{}'),
       coalesce(array_agg(coalesce(c.description, '') ORDER BY c.position) FILTER (WHERE c.column_name IS NOT NULL), '{}'),
       coalesce(array_agg(c.is_primary_key ORDER BY c.position) FILTER (WHERE c.column_name IS NOT NULL), '{}'),
       coalesce(array_agg(c.is_unique ORDER BY c.position) FILTER (WHERE c.column_name IS NOT NULL), '{}'),
       coalesce(array_agg(c.not_null ORDER BY c.position) FILTER (WHERE c.column_name IS NOT NULL), '{}'),
       coalesce(array_agg(array_to_string(c.sample_values[1:5], E'\x1f') ORDER BY c.position) FILTER (WHERE c.column_name IS NOT NULL), '{}')
FROM atrium.tables t LEFT JOIN atrium.columns c ON c.table_id = t.id
WHERE t.id = ANY($1)
GROUP BY t.id`, ids)
	if err != nil {
		return nil, fmt.Errorf("load table metadata: %w", err)
	}
	defer rows.Close()
	out := make(map[int64]*TableInfo, len(ids))
	for rows.Next() {
		t := &TableInfo{}
		var names, types, comments, descs, samples []string
		var pks, uniq, notNull []bool
		if err := rows.Scan(&t.ID, &t.Schema, &t.Name, &t.Kind, &t.Comment, &t.Purpose, &t.EstRows,
			&names, &types, &comments, &descs, &pks, &uniq, &notNull, &samples); err != nil {
			return nil, fmt.Errorf("load table metadata: %w", err)
		}
		t.Columns = make([]ColumnInfo, len(names))
		for i := range names {
			c := ColumnInfo{Name: names[i], Type: types[i], Comment: comments[i], Description: descs[i], PrimaryKey: pks[i], Unique: uniq[i], NotNull: notNull[i]}
			if samples[i] != "" {
				c.SampleValues = strings.Split(samples[i], "\x1f")
			}
			t.Columns[i] = c
		}
		t.prepare(expand, emb)
		out[t.ID] = t
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load table metadata: %w", err)
	}
	return out, nil
}
