package catalog

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// relation is one table-like relation of the source database as the sync
// sees it; details are filled in per chunk so memory stays bounded.
type relation struct {
	OID       uint32
	Schema    string
	Name      string
	Kind      string
	Comment   *string
	RelTuples float64
	CanSelect bool

	Columns []column
	FKs     []foreignKey
	// Constraint summary in a canonical form, for the fingerprint.
	constraints []string
}

type column struct {
	Num       int16
	Name      string
	Type      string
	NotNull   bool
	Comment   *string
	PK        bool
	Unique    bool
	NullFrac  *float32
	NDistinct *float32
	AvgWidth  *int32
	// MCV are pg_stats' most common values and histogram bounds: real
	// values from ANALYZE's sample of up to 30,000 rows, free to read,
	// added to the sampled ones.
	MCV []string
}

type foreignKey struct {
	Name       string
	Columns    []string
	RefSchema  string
	RefTable   string
	RefColumns []string
}

func (r *relation) qualified() string {
	return pgx.Identifier{r.Schema, r.Name}.Sanitize()
}

func relKind(k string) string {
	switch k {
	case "r":
		return "table"
	case "v":
		return "view"
	case "m":
		return "materialized_view"
	case "f":
		return "foreign_table"
	case "p":
		return "partitioned_table"
	}
	return "table"
}

// systemSchemas are never catalogued: PostgreSQL's own and Atrium's.
func systemSchema(s string) bool {
	return s == "pg_catalog" || s == "information_schema" || s == "atrium" ||
		strings.HasPrefix(s, "pg_toast") || strings.HasPrefix(s, "pg_temp_")
}

// schemaFilter matches schema names against comma-separated glob patterns
// (path.Match syntax: * ? [..]).
type schemaFilter struct {
	include, exclude []string
}

func newSchemaFilter(include, exclude []string) (schemaFilter, error) {
	var f schemaFilter
	split := func(in []string) ([]string, error) {
		var out []string
		for _, s := range in {
			for p := range strings.SplitSeq(s, ",") {
				p = strings.TrimSpace(p)
				if p == "" {
					continue
				}
				if _, err := path.Match(p, ""); err != nil {
					return nil, fmt.Errorf("catalog: bad schema pattern %q: %w", p, err)
				}
				out = append(out, p)
			}
		}
		return out, nil
	}
	var err error
	if f.include, err = split(include); err != nil {
		return f, err
	}
	if f.exclude, err = split(exclude); err != nil {
		return f, err
	}
	return f, nil
}

// match reports whether schema s (or "schema.table" for exclude patterns
// with a dot) is selected.
func (f schemaFilter) match(schema, table string) bool {
	if systemSchema(schema) {
		return false
	}
	if len(f.include) > 0 {
		ok := false
		for _, p := range f.include {
			if m, _ := path.Match(p, schema); m {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	for _, p := range f.exclude {
		if strings.Contains(p, ".") {
			if m, _ := path.Match(p, schema+"."+table); m {
				return false
			}
			continue
		}
		if m, _ := path.Match(p, schema); m {
			return false
		}
	}
	return true
}

const listRelationsSQL = `
SELECT c.oid, n.nspname, c.relname, c.relkind::text, d.description, c.reltuples::float8,
       has_table_privilege(c.oid, 'SELECT')
  FROM pg_class c
  JOIN pg_namespace n ON n.oid = c.relnamespace
  LEFT JOIN pg_description d ON d.objoid = c.oid AND d.classoid = 'pg_class'::regclass AND d.objsubid = 0
 WHERE c.relkind IN ('r', 'v', 'm', 'f', 'p')
   AND NOT c.relispartition
   AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'atrium')
   AND n.nspname NOT LIKE 'pg\_toast%' AND n.nspname NOT LIKE 'pg\_temp\_%'
 ORDER BY n.nspname, c.relname`

// listRelations returns every selected relation without details.
func listRelations(ctx context.Context, src *pgxpool.Pool, f schemaFilter) ([]*relation, error) {
	rows, err := src.Query(ctx, listRelationsSQL)
	if err != nil {
		return nil, fmt.Errorf("catalog: list relations: %w", err)
	}
	defer rows.Close()
	var out []*relation
	for rows.Next() {
		r := &relation{}
		var kind string
		if err := rows.Scan(&r.OID, &r.Schema, &r.Name, &kind, &r.Comment, &r.RelTuples, &r.CanSelect); err != nil {
			return nil, fmt.Errorf("catalog: list relations: %w", err)
		}
		if !f.match(r.Schema, r.Name) {
			continue
		}
		r.Kind = relKind(kind)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("catalog: list relations: %w", err)
	}
	return out, nil
}

const columnsSQL = `
SELECT a.attrelid, a.attnum, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull, d.description
  FROM pg_attribute a
  LEFT JOIN pg_description d ON d.objoid = a.attrelid AND d.classoid = 'pg_class'::regclass AND d.objsubid = a.attnum
 WHERE a.attrelid = ANY($1) AND a.attnum > 0 AND NOT a.attisdropped
 ORDER BY a.attrelid, a.attnum`

// Keys: primary and unique constraints, single-column unique indexes that
// are not constraints, and foreign keys; column lists in key order.
const keysSQL = `
SELECT con.conrelid, con.contype::text, con.conname,
       ARRAY(SELECT a.attname::text FROM unnest(con.conkey) WITH ORDINALITY k(n, o)
               JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.n ORDER BY k.o),
       fn.nspname::text, fc.relname::text,
       ARRAY(SELECT a.attname::text FROM unnest(con.confkey) WITH ORDINALITY k(n, o)
               JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.n ORDER BY k.o)
  FROM pg_constraint con
  LEFT JOIN pg_class fc ON fc.oid = con.confrelid
  LEFT JOIN pg_namespace fn ON fn.oid = fc.relnamespace
 WHERE con.conrelid = ANY($1) AND con.contype IN ('p', 'u', 'f')
UNION ALL
SELECT i.indrelid, 'i', ic.relname::text, ARRAY[a.attname::text], NULL, NULL, NULL
  FROM pg_index i
  JOIN pg_class ic ON ic.oid = i.indexrelid
  JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
 WHERE i.indrelid = ANY($1) AND i.indisunique AND i.indnkeyatts = 1 AND i.indpred IS NULL
   AND i.indexprs IS NULL
   AND NOT i.indisprimary
   AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conrelid = i.indrelid AND c.conindid = i.indexrelid)`

// loadDetails fills Columns, FKs and constraints of rels (one chunk).
func loadDetails(ctx context.Context, src *pgxpool.Pool, rels []*relation) error {
	byOID := make(map[uint32]*relation, len(rels))
	oids := make([]uint32, len(rels))
	for i, r := range rels {
		byOID[r.OID] = r
		oids[i] = r.OID
		r.Columns = r.Columns[:0]
		r.FKs = nil
		r.constraints = nil
	}
	rows, err := src.Query(ctx, columnsSQL, oids)
	if err != nil {
		return fmt.Errorf("catalog: read columns: %w", err)
	}
	for rows.Next() {
		var oid uint32
		var c column
		if err := rows.Scan(&oid, &c.Num, &c.Name, &c.Type, &c.NotNull, &c.Comment); err != nil {
			rows.Close()
			return fmt.Errorf("catalog: read columns: %w", err)
		}
		if r := byOID[oid]; r != nil {
			r.Columns = append(r.Columns, c)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("catalog: read columns: %w", err)
	}

	rows, err = src.Query(ctx, keysSQL, oids)
	if err != nil {
		return fmt.Errorf("catalog: read keys: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			oid                uint32
			typ, name          string
			cols, refCols      []string
			refSchema, refName *string
		)
		if err := rows.Scan(&oid, &typ, &name, &cols, &refSchema, &refName, &refCols); err != nil {
			return fmt.Errorf("catalog: read keys: %w", err)
		}
		r := byOID[oid]
		if r == nil {
			continue
		}
		switch typ {
		case "p":
			r.constraints = append(r.constraints, "p:"+strings.Join(cols, ","))
			for i := range r.Columns {
				if contains(cols, r.Columns[i].Name) {
					r.Columns[i].PK = true
					if len(cols) == 1 {
						r.Columns[i].Unique = true
					}
				}
			}
		case "u", "i":
			r.constraints = append(r.constraints, "u:"+strings.Join(cols, ","))
			if len(cols) == 1 {
				for i := range r.Columns {
					if r.Columns[i].Name == cols[0] {
						r.Columns[i].Unique = true
					}
				}
			}
		case "f":
			fk := foreignKey{Name: name, Columns: cols, RefColumns: refCols}
			if refSchema != nil && refName != nil {
				fk.RefSchema, fk.RefTable = *refSchema, *refName
			}
			r.FKs = append(r.FKs, fk)
			r.constraints = append(r.constraints, "f:"+name+":"+strings.Join(cols, ",")+">"+fk.RefSchema+"."+fk.RefTable+"("+strings.Join(refCols, ",")+")")
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("catalog: read keys: %w", err)
	}
	for _, r := range rels {
		sort.Strings(r.constraints)
	}
	return nil
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// rowBucket is the order of magnitude of the row estimate that goes into the
// fingerprint, so a table is re-sampled when it grows 2×, not on every
// insert. -1 means "never analysed".
func rowBucket(reltuples float64) int {
	if reltuples < 0 {
		return -1
	}
	return int(math.Log2(reltuples + 1))
}

// fingerprint hashes everything that, when changed, makes the table's
// catalog rows stale. salt carries the sync settings that shape documents.
func (r *relation) fingerprint(salt string) string {
	h := sha256.New()
	w := func(parts ...string) {
		for _, p := range parts {
			h.Write([]byte(strconv.Itoa(len(p))))
			h.Write([]byte{':'})
			h.Write([]byte(p))
		}
	}
	opt := func(s *string) string {
		if s == nil {
			return "\x00"
		}
		return *s
	}
	w(salt, r.Kind, opt(r.Comment), strconv.Itoa(rowBucket(r.RelTuples)), strconv.FormatBool(r.CanSelect))
	for _, c := range r.Columns {
		w(c.Name, c.Type, strconv.FormatBool(c.NotNull), opt(c.Comment))
	}
	w(r.constraints...)
	return hex.EncodeToString(h.Sum(nil)[:16])
}
