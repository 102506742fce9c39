package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"

	"github.com/atriumdb/atrium/internal/ident"
)

// joinColumn is what join inference knows about one catalogued column.
type joinColumn struct {
	tableID  int64
	table    string
	name     string
	typ      string
	unique   bool
	pk       bool
	values   map[string]struct{}
	complete bool    // the table was read whole: values are all its values
	distinct float64 // estimated distinct non-NULL values in the whole column (0: unknown)
	emb      []float32
	norm     string // name words run together: SingerID, singer_id → singerid
	qual     string // table-qualified form: singer + id → singerid
}

type fkCol struct {
	table int64
	col   string
}

// joinEdge is one row of atrium.join_edges.
type joinEdge struct {
	From, To         int64
	FromCols, ToCols []string
	Source           string
	Score            float64
	Evidence         map[string]any
}

// maxValuePosting bounds value-based candidate generation: a value that
// occurs in more unique columns than this (1, 2, 3 ...) says nothing about
// which column another column references.
const maxValuePosting = 32

// syncJoins recomputes the join edges of every schema marked dirty.
func (s *syncer) syncJoins(ctx context.Context) error {
	rows, err := s.cat.Query(ctx, "SELECT schema_name FROM atrium.dirty_schemas ORDER BY schema_name")
	if err != nil {
		return fmt.Errorf("catalog: read dirty schemas: %w", err)
	}
	schemas, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("catalog: read dirty schemas: %w", err)
	}
	for i, sch := range schemas {
		fks, inferred, err := s.joinSchema(ctx, sch)
		if err != nil {
			return err
		}
		s.stats.SchemasJoined++
		s.stats.ForeignKeys += fks
		s.stats.Inferred += inferred
		s.progress("joins", i+1, len(schemas))
	}
	return nil
}

// joinSchema computes the edges leaving tables of one schema: its declared
// foreign keys, and inferred key/foreign-key pairs among its tables, and
// replaces the stored ones in one transaction.
func (s *syncer) joinSchema(ctx context.Context, schema string) (int, int, error) {
	ids := map[[2]string]int64{}
	rows, err := s.cat.Query(ctx, "SELECT id, schema_name, table_name FROM atrium.tables WHERE schema_name = $1", schema)
	if err != nil {
		return 0, 0, fmt.Errorf("catalog: joins of %s: %w", schema, err)
	}
	for rows.Next() {
		var id int64
		var sc, t string
		if err := rows.Scan(&id, &sc, &t); err != nil {
			rows.Close()
			return 0, 0, fmt.Errorf("catalog: joins of %s: %w", schema, err)
		}
		ids[[2]string{sc, t}] = id
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, 0, fmt.Errorf("catalog: joins of %s: %w", schema, err)
	}

	var edges []joinEdge
	declared := map[[2]int64]bool{}
	fkCols := map[fkCol]bool{}
	if len(ids) > 0 {
		fks, err := s.declaredFKs(ctx, schema, ids)
		if err != nil {
			return 0, 0, err
		}
		for _, e := range fks {
			declared[[2]int64{e.From, e.To}] = true
			declared[[2]int64{e.To, e.From}] = true
			for _, c := range e.FromCols {
				fkCols[fkCol{e.From, c}] = true
			}
		}
		edges = append(edges, fks...)
	}
	nFK := len(edges)
	if len(ids) > 1 {
		cols, err := s.loadJoinColumns(ctx, schema)
		if err != nil {
			return 0, 0, err
		}
		inferred, err := s.inferJoins(ctx, schema, cols, declared, fkCols)
		if err != nil {
			return 0, 0, err
		}
		edges = append(edges, inferred...)
	}

	payload, err := json.Marshal(edgesJSON(edges))
	if err != nil {
		return 0, 0, fmt.Errorf("catalog: joins of %s: encode: %w", schema, err)
	}
	err = pgx.BeginFunc(ctx, s.cat, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM atrium.join_edges e USING atrium.tables t
			WHERE e.from_table_id = t.id AND t.schema_name = $1`, schema); err != nil {
			return err
		}
		if len(edges) > 0 {
			if _, err := tx.Exec(ctx, `INSERT INTO atrium.join_edges
				(from_table_id, from_columns, to_table_id, to_columns, source, score, evidence)
				SELECT (e->>'from')::bigint, ARRAY(SELECT jsonb_array_elements_text(e->'from_columns')),
				       (e->>'to')::bigint, ARRAY(SELECT jsonb_array_elements_text(e->'to_columns')),
				       e->>'source', (e->>'score')::real, e->'evidence'
				  FROM jsonb_array_elements($1::jsonb) e
				ON CONFLICT DO NOTHING`, string(payload)); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, "DELETE FROM atrium.dirty_schemas WHERE schema_name = $1", schema); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "UPDATE atrium.catalog_state SET version = version + 1, updated_at = now()")
		return err
	})
	if err != nil {
		return 0, 0, fmt.Errorf("catalog: write join edges of %s: %w", schema, err)
	}
	return nFK, len(edges) - nFK, nil
}

func edgesJSON(edges []joinEdge) []map[string]any {
	out := make([]map[string]any, len(edges))
	for i, e := range edges {
		out[i] = map[string]any{"from": e.From, "to": e.To, "from_columns": e.FromCols, "to_columns": e.ToCols,
			"source": e.Source, "score": e.Score, "evidence": e.Evidence}
	}
	return out
}

// declaredFKs reads the foreign keys of the schema's tables from the source.
// A reference to a table the catalog does not hold (outside --schemas) is
// left out.
func (s *syncer) declaredFKs(ctx context.Context, schema string, ids map[[2]string]int64) ([]joinEdge, error) {
	rows, err := s.src.Query(ctx, `
		SELECT c.relname::text, con.conname::text,
		       ARRAY(SELECT a.attname::text FROM unnest(con.conkey) WITH ORDINALITY k(n, o)
		               JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.n ORDER BY k.o),
		       fn.nspname::text, fc.relname::text,
		       ARRAY(SELECT a.attname::text FROM unnest(con.confkey) WITH ORDINALITY k(n, o)
		               JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.n ORDER BY k.o)
		  FROM pg_constraint con
		  JOIN pg_class c ON c.oid = con.conrelid
		  JOIN pg_namespace n ON n.oid = c.relnamespace
		  JOIN pg_class fc ON fc.oid = con.confrelid
		  JOIN pg_namespace fn ON fn.oid = fc.relnamespace
		 WHERE con.contype = 'f' AND n.nspname = $1
		 ORDER BY c.relname, con.conname`, schema)
	if err != nil {
		return nil, fmt.Errorf("catalog: read foreign keys of %s: %w", schema, err)
	}
	defer rows.Close()
	var out []joinEdge
	for rows.Next() {
		var table, name, refSchema, refTable string
		var cols, refCols []string
		if err := rows.Scan(&table, &name, &cols, &refSchema, &refTable, &refCols); err != nil {
			return nil, fmt.Errorf("catalog: read foreign keys of %s: %w", schema, err)
		}
		from, ok := ids[[2]string{schema, table}]
		if !ok {
			continue
		}
		to, ok := ids[[2]string{refSchema, refTable}]
		if !ok && refSchema != schema {
			var id int64
			err := s.cat.QueryRow(ctx, "SELECT id FROM atrium.tables WHERE schema_name = $1 AND table_name = $2",
				refSchema, refTable).Scan(&id)
			if err == nil {
				to, ok = id, true
				ids[[2]string{refSchema, refTable}] = id
			}
		}
		if !ok {
			continue
		}
		out = append(out, joinEdge{From: from, To: to, FromCols: cols, ToCols: refCols, Source: "foreign_key", Score: 1,
			Evidence: map[string]any{"constraint": name}})
	}
	return out, rows.Err()
}

func (s *syncer) loadJoinColumns(ctx context.Context, schema string) ([]*joinColumn, error) {
	conn, release, err := s.acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("catalog: read columns of %s: %w", schema, err)
	}
	defer release()
	rows, err := conn.Query(ctx, `
		SELECT t.id, t.table_name, t.sample_complete, c.column_name, c.data_type, c.is_unique, c.is_primary_key,
		       c.sample_values, c.embedding,
		       CASE WHEN c.n_distinct > 0 THEN c.n_distinct
		            WHEN c.n_distinct < 0 THEN -c.n_distinct * t.est_rows * (1 - coalesce(c.null_frac, 0))
		            WHEN c.is_unique THEN t.est_rows ELSE 0 END
		  FROM atrium.tables t JOIN atrium.columns c ON c.table_id = t.id
		 WHERE t.schema_name = $1 AND t.skipped_reason IS NULL
		 ORDER BY t.id, c.position`, schema)
	if err != nil {
		return nil, fmt.Errorf("catalog: read columns of %s: %w", schema, err)
	}
	defer rows.Close()
	var out []*joinColumn
	for rows.Next() {
		c := &joinColumn{}
		var vals []string
		var emb *pgvector.Vector
		if err := rows.Scan(&c.tableID, &c.table, &c.complete, &c.name, &c.typ, &c.unique, &c.pk, &vals, &emb, &c.distinct); err != nil {
			return nil, fmt.Errorf("catalog: read columns of %s: %w", schema, err)
		}
		if emb != nil {
			c.emb = emb.Slice()
		}
		c.values = make(map[string]struct{}, len(vals))
		for _, v := range vals {
			c.values[v] = struct{}{}
		}
		// Compare names without separators, so countrycode, country_code and
		// CountryCode agree.
		c.norm = strings.Join(ident.Split(c.name), "")
		c.qual = strings.ReplaceAll(qualifiedName(c.table, c.name), "_", "")
		out = append(out, c)
	}
	return out, rows.Err()
}

// qualifiedName is how a referencing column usually spells a reference to
// column col of table: singer.id → singer_id, singers.singer_id →
// singer_id (the table words are singularised and not repeated).
func qualifiedName(table, col string) string {
	tw := ident.Split(table)
	for i := range tw {
		tw[i] = stem(tw[i])
	}
	cw := ident.Split(col)
	t := strings.Join(tw, "_")
	c := strings.Join(cw, "_")
	if strings.HasPrefix(c, t+"_") || c == t {
		return c
	}
	return t + "_" + c
}

func genericID(norm string) bool { return norm == "id" }

// inferJoins scores column pairs as CORE-T (Appendix B) does: a pair
// (c, u) is valid only if u is unique and c's sampled non-NULL values are a
// subset of u's values; s = 0.5·Jaccard + 0.5·name, name = 0.5·exact +
// 0.5·cosine of the column embeddings. Table compatibility is the best valid
// pair; an edge is kept when it reaches the threshold and the tables are not
// already joined by a declared key.
//
// Candidates come from blocking rather than all pairs, so a schema of
// thousands of tables stays cheap: same normalised name, a name that is the
// other column qualified by its table (singer_id → singer.id), or sharing a
// value that few unique columns hold. Two columns that are both just "id"
// are never paired, and two unique columns only when their names agree:
// every surrogate key would match every other.
//
// Jaccard of two empty samples (tables without rows, like Spider's
// training databases) is taken as 1 — the sets are equal — so empty
// databases get edges from names alone; the evidence says no_rows.
func (s *syncer) inferJoins(ctx context.Context, schema string, cols []*joinColumn, declared map[[2]int64]bool, fkCols map[fkCol]bool) ([]joinEdge, error) {
	byName := map[string][]*joinColumn{}
	byValue := map[string][]*joinColumn{}
	for _, u := range cols {
		if !u.unique {
			continue
		}
		byName[u.norm] = append(byName[u.norm], u)
		if u.qual != u.norm {
			byName[u.qual] = append(byName[u.qual], u)
		}
		for v := range u.values {
			if p := byValue[v]; len(p) <= maxValuePosting {
				byValue[v] = append(p, u)
			}
		}
	}
	type pairKey [2]int64
	best := map[pairKey]joinEdge{}
	for _, c := range cols {
		if fkCols[fkCol{c.tableID, c.name}] {
			continue // a declared foreign key already says what it references
		}
		cands := map[*joinColumn]bool{}
		for _, u := range byName[c.norm] {
			cands[u] = true
		}
		// A value held by few unique columns points at them.
		var rare []*joinColumn
		for v := range c.values {
			p := byValue[v]
			if len(p) > 0 && len(p) <= maxValuePosting && (rare == nil || len(p) < len(rare)) {
				rare = p
			}
		}
		for _, u := range rare {
			cands[u] = true
		}
		// A referencing column references one key: keep its best pair.
		var colBest *joinEdge
		for u := range cands {
			if u.tableID == c.tableID || (genericID(c.norm) && genericID(u.norm)) {
				continue
			}
			if declared[pairKey{c.tableID, u.tableID}] {
				continue
			}
			e, ok, err := s.scorePair(ctx, schema, c, u)
			if err != nil {
				return nil, err
			}
			if !ok || e.Score < s.opts.JoinThreshold {
				continue
			}
			if colBest == nil || e.Score > colBest.Score || (e.Score == colBest.Score && e.To < colBest.To) {
				colBest = &e
			}
		}
		if colBest != nil {
			e := *colBest
			k := pairKey{e.From, e.To}
			if old, seen := best[k]; !seen || e.Score > old.Score ||
				(e.Score == old.Score && e.FromCols[0]+e.ToCols[0] < old.FromCols[0]+old.ToCols[0]) {
				best[k] = e
			}
		}
	}
	out := make([]joinEdge, 0, len(best))
	for _, e := range best {
		// A 1:1 pair found in both directions is one join: keep one edge.
		if r, ok := best[pairKey{e.To, e.From}]; ok && preferEdge(r, e) {
			continue
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].From != out[j].From {
			return out[i].From < out[j].From
		}
		return out[i].To < out[j].To
	})
	return out, nil
}

// scorePair validates and scores c → u (u unique).
func (s *syncer) scorePair(ctx context.Context, schema string, c, u *joinColumn) (joinEdge, bool, error) {
	exact := 0.0
	if c.norm == u.norm || c.norm == u.qual || c.qual == u.norm {
		exact = 1
	}
	// Two unique columns pair 1:1, and surrogate keys numbered 1..n are
	// subsets of each other in every schema (addresses.address_id ⊆
	// courses.course_id); such a pair is taken only when the names agree.
	if c.unique && exact == 0 {
		return joinEdge{}, false, nil
	}
	subset := true
	inter := 0
	for v := range c.values {
		if _, ok := u.values[v]; ok {
			inter++
		} else {
			subset = false
		}
	}
	verified := "sample"
	// A column with more distinct values than a fully read unique column
	// cannot be its subset, whatever its sample shows.
	if subset && u.complete && c.distinct > 1.1*float64(len(u.values)) {
		subset = false
	}
	if !subset && !u.complete && u.pk && len(c.values) > 0 {
		// u's sample is partial: ask the source whether the missing values
		// exist, through u's unique index when it has one.
		ok, err := s.verifySubset(ctx, schema, u, c.values)
		if err != nil {
			return joinEdge{}, false, err
		}
		subset = ok
		verified = "query"
		if ok {
			inter = len(c.values)
		}
	}
	if !subset {
		return joinEdge{}, false, nil
	}
	// Small integers are a subset of every serial key that numbers as many
	// rows (a rating 1..5 of warehouse_id 1..6, a department_id of
	// tax_rate_id): integer values alone do not show a reference, and the
	// builtin embedder's name similarity of two *_id columns is mostly
	// their shared "id". Such a pair, unless its names agree, needs a word
	// of the column's name in the key's table or column name
	// (shipping_address → addresses.address_id).
	if exact == 0 && integers(c.values) && integers(u.values) && !shareNameWord(c, u) {
		return joinEdge{}, false, nil
	}
	// With c ⊆ u, Jaccard(c, u) = |c| / |u| over whole columns. A side read
	// whole is counted exactly; otherwise pg_stats' estimate (or the row
	// estimate of a unique column) stands in, and the samples only when
	// there is nothing better.
	noRows := len(c.values) == 0 && len(u.values) == 0
	jac := 1.0
	if !noRows {
		dc, du := float64(len(c.values)), float64(len(u.values))
		if !c.complete && c.distinct > dc {
			dc = c.distinct
		}
		if !u.complete && u.distinct > du {
			du = u.distinct
		}
		jac = 0
		if du > 0 {
			jac = math.Min(1, dc/du)
		}
		_ = inter
	}
	sem := math.Max(0, Cosine(c.emb, u.emb))
	name := 0.5*exact + 0.5*sem
	score := 0.5*jac + 0.5*name
	uniq := "sample"
	switch {
	case u.pk:
		uniq = "primary_key"
	case u.unique:
		uniq = "unique"
	}
	return joinEdge{
		From: c.tableID, To: u.tableID, FromCols: []string{c.name}, ToCols: []string{u.name},
		Source: "inferred", Score: round3(score),
		Evidence: map[string]any{
			"jaccard": round3(jac), "exact": exact, "semantic": round3(sem), "name": round3(name),
			"subset": true, "subset_checked_by": verified, "to_unique": uniq,
			"from_sampled": len(c.values), "to_sampled": len(u.values), "no_rows": noRows,
		},
	}, true, nil
}

// integers reports whether vals, a non-empty sample, are all integers.
func integers(vals map[string]struct{}) bool {
	for v := range vals {
		if _, err := strconv.ParseInt(v, 10, 64); err != nil {
			return false
		}
	}
	return len(vals) > 0
}

// keyWords are the words that say a column is a key, not what it keys.
var keyWords = map[string]bool{"id": true, "key": true, "code": true, "no": true, "num": true, "number": true, "fk": true, "ref": true, "pk": true}

// shareNameWord reports whether c's name and u's table or column name
// share a stem other than a key word.
func shareNameWord(c, u *joinColumn) bool {
	words := map[string]bool{}
	for _, s := range []string{u.table, u.name} {
		for _, w := range ident.Split(s) {
			words[stem(w)] = true
		}
	}
	for _, w := range ident.Split(c.name) {
		if st := stem(w); !keyWords[st] && words[st] {
			return true
		}
	}
	return false
}

// preferEdge reports whether a should stand for a 1:1 join over its
// reverse b: the side pointing at a primary key, then the higher score.
func preferEdge(a, b joinEdge) bool {
	apk, bpk := a.Evidence["to_unique"] == "primary_key", b.Evidence["to_unique"] == "primary_key"
	if apk != bpk {
		return apk
	}
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.From < b.From
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// verifySubset asks the source whether every value exists in u's column.
// The values are cast to the column's type so a unique index can serve the
// lookup; values that do not cast are not in the column.
func (s *syncer) verifySubset(ctx context.Context, schema string, u *joinColumn, values map[string]struct{}) (bool, error) {
	vals := make([]string, 0, len(values))
	for v := range values {
		vals = append(vals, v)
	}
	q := fmt.Sprintf("SELECT count(DISTINCT %[1]s) FROM %[2]s WHERE %[1]s = ANY($1::text[]::%[3]s[])",
		pgx.Identifier{u.name}.Sanitize(), pgx.Identifier{schema, u.table}.Sanitize(), u.typ)
	qctx, cancel := context.WithTimeout(ctx, s.opts.SampleTimeout)
	defer cancel()
	var n int
	if err := s.src.QueryRow(qctx, q, vals).Scan(&n); err != nil {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		// A cast failure or timeout means "not shown to be a subset".
		return false, nil
	}
	return n == len(vals), nil
}
