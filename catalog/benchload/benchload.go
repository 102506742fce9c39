// Package benchload loads a Spider-format table-retrieval benchmark into a
// PostgreSQL database, one schema per database id, so that the catalog can
// be built from it and `atrium eval` can measure retrieval against it.
//
// A benchmark directory holds tables.json (Spider format) and optionally
// databases/<db_id>.sql: plain SQL (pg_dump style, COPY ... FROM stdin
// blocks allowed) without schema qualifiers. Each file is executed with
// search_path set to the schema named by the lower-cased db_id. A database
// without a file is created from tables.json: its tables, columns, primary
// keys and foreign keys, without rows.
package benchload

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Options configures Load.
type Options struct {
	// DBIDs are the databases to load. Empty means the db_ids the
	// questions (dev.json, else questions.json) refer to, and every
	// database in tables.json when there are no questions.
	DBIDs []string
	// Replace reloads schemas that were loaded before; otherwise a schema
	// whose load marker matches its source is left as it is.
	Replace bool
	// Logger receives one line per database; nil discards.
	Logger *slog.Logger
}

// Result says what Load did.
type Result struct {
	Loaded    []string // db_ids loaded now
	Unchanged []string // db_ids already loaded from the same source
	FromJSON  []string // db_ids created from tables.json (no SQL file)
}

// Database is one database of tables.json.
type Database struct {
	DBID           string          `json:"db_id"`
	TableNames     []string        `json:"table_names_original"`
	ColumnNames    [][2]any        `json:"column_names_original"`
	ColumnTypes    []string        `json:"column_types"`
	PrimaryKeys    json.RawMessage `json:"primary_keys"`
	ForeignKeys    [][2]int        `json:"foreign_keys"`
	TableNamesNorm []string        `json:"table_names"`
}

// ReadTables reads dir/tables.json.
func ReadTables(dir string) ([]Database, error) {
	b, err := os.ReadFile(filepath.Join(dir, "tables.json"))
	if err != nil {
		return nil, fmt.Errorf("benchload: %w", err)
	}
	var dbs []Database
	if err := json.Unmarshal(b, &dbs); err != nil {
		return nil, fmt.Errorf("benchload: parse tables.json: %w", err)
	}
	return dbs, nil
}

// SchemaName is the schema a db_id is loaded into.
func SchemaName(dbID string) string { return strings.ToLower(dbID) }

// questionDBIDs returns the distinct db_ids of dev.json or questions.json.
func questionDBIDs(dir string) ([]string, error) {
	for _, name := range []string{"dev.json", "questions.json"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("benchload: %w", err)
		}
		var qs []struct {
			DBID string `json:"db_id"`
		}
		if err := json.Unmarshal(b, &qs); err != nil {
			return nil, fmt.Errorf("benchload: parse %s: %w", name, err)
		}
		seen := map[string]bool{}
		var out []string
		for _, q := range qs {
			if q.DBID != "" && !seen[q.DBID] {
				seen[q.DBID] = true
				out = append(out, q.DBID)
			}
		}
		sort.Strings(out)
		return out, nil
	}
	return nil, nil
}

// Load creates one schema per selected database in the database behind
// pool and fills it. Each database is loaded in its own transaction, so a
// failure leaves earlier databases loaded and none half-loaded.
func Load(ctx context.Context, pool *pgxpool.Pool, dir string, opts Options) (Result, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	dbs, err := ReadTables(dir)
	if err != nil {
		return Result{}, err
	}
	byID := map[string]*Database{}
	for i := range dbs {
		byID[dbs[i].DBID] = &dbs[i]
	}
	ids := opts.DBIDs
	if len(ids) == 0 {
		if ids, err = questionDBIDs(dir); err != nil {
			return Result{}, err
		}
	}
	if len(ids) == 0 {
		for _, d := range dbs {
			ids = append(ids, d.DBID)
		}
	}
	var res Result
	for _, id := range ids {
		path := filepath.Join(dir, "databases", id+".sql")
		sqlText, err := os.ReadFile(path)
		fromJSON := false
		if errors.Is(err, os.ErrNotExist) {
			db := byID[id]
			if db == nil {
				return res, fmt.Errorf("benchload: database %s has neither %s nor an entry in tables.json", id, path)
			}
			ddl, err := SchemaDDL(*db)
			if err != nil {
				return res, err
			}
			sqlText, fromJSON = []byte(ddl), true
		} else if err != nil {
			return res, fmt.Errorf("benchload: %w", err)
		}
		sum := sha256.Sum256(sqlText)
		marker := "atrium benchload " + hex.EncodeToString(sum[:8])
		schema := SchemaName(id)
		if !opts.Replace {
			var cur *string
			if err := pool.QueryRow(ctx, `SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = $1`,
				schema).Scan(&cur); err == nil && cur != nil && *cur == marker {
				res.Unchanged = append(res.Unchanged, id)
				continue
			} else if err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return res, fmt.Errorf("benchload: check schema %s: %w", schema, err)
			}
		}
		if err := loadOne(ctx, pool, schema, sqlText, marker); err != nil {
			return res, fmt.Errorf("benchload: load %s: %w", id, err)
		}
		log.Info("loaded benchmark database", "db_id", id, "schema", schema, "from_tables_json", fromJSON)
		res.Loaded = append(res.Loaded, id)
		if fromJSON {
			res.FromJSON = append(res.FromJSON, id)
		}
	}
	return res, nil
}

var copyLine = regexp.MustCompile(`(?i)^\s*COPY\s+.*\s+FROM\s+stdin\s*;\s*$`)

func loadOne(ctx context.Context, pool *pgxpool.Pool, schema string, sqlText []byte, marker string) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// The dumps SET session parameters; do not hand them to the next user
	// of this pooled connection.
	defer func() {
		if _, err := conn.Exec(context.WithoutCancel(ctx), "RESET ALL"); err != nil {
			conn.Conn().Close(context.WithoutCancel(ctx)) //nolint:errcheck
		}
		conn.Release()
	}()
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck
	ident := pgx.Identifier{schema}.Sanitize()
	if _, err := tx.Exec(ctx, "DROP SCHEMA IF EXISTS "+ident+" CASCADE"); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, "CREATE SCHEMA "+ident); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, "SELECT set_config('search_path', $1, true)", ident); err != nil {
		return err
	}
	pg := conn.Conn().PgConn()
	var pending strings.Builder
	flush := func() error {
		if strings.TrimSpace(pending.String()) == "" {
			pending.Reset()
			return nil
		}
		_, err := pg.Exec(ctx, pending.String()).ReadAll()
		pending.Reset()
		return err
	}
	sc := bufio.NewScanner(bytes.NewReader(sqlText))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Text()
		if !copyLine.MatchString(line) {
			pending.WriteString(line)
			pending.WriteByte('\n')
			continue
		}
		if err := flush(); err != nil {
			return err
		}
		var data bytes.Buffer
		ended := false
		for sc.Scan() {
			if sc.Text() == `\.` {
				ended = true
				break
			}
			data.WriteString(sc.Text())
			data.WriteByte('\n')
		}
		if !ended {
			return fmt.Errorf("COPY block without its \\. terminator: %s", line)
		}
		stmt := strings.TrimSuffix(strings.TrimSpace(line), ";")
		if _, err := pg.CopyFrom(ctx, &data, stmt); err != nil {
			return fmt.Errorf("%s: %w", stmt, err)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if err := flush(); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, "COMMENT ON SCHEMA "+ident+" IS "+quoteLiteral(marker)); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return err
	}
	// Give the planner (and the catalog's row estimates) real numbers.
	rows, err := conn.Query(ctx, "SELECT format('%I.%I', schemaname, relname) FROM pg_stat_user_tables WHERE schemaname = $1", schema)
	if err != nil {
		return err
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	for _, t := range tables {
		if _, err := conn.Exec(ctx, "ANALYZE "+t); err != nil {
			return err
		}
	}
	return nil
}

func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// SchemaDDL writes the CREATE TABLE statements for a tables.json database:
// names lower-cased as in the benchmark's SQL files, Spider types mapped to
// PostgreSQL ones, primary keys, and the foreign keys whose referenced
// columns form a primary key (PostgreSQL accepts no others).
func SchemaDDL(db Database) (string, error) {
	type col struct {
		name, typ string
	}
	tables := make([][]col, len(db.TableNames))
	colTable := make([]int, len(db.ColumnNames))
	colName := make([]string, len(db.ColumnNames))
	for i, cn := range db.ColumnNames {
		ti, _ := cn[0].(float64)
		name, _ := cn[1].(string)
		colTable[i], colName[i] = int(ti), strings.ToLower(name)
		if ti < 0 || int(ti) >= len(tables) {
			continue
		}
		typ := "text"
		if i < len(db.ColumnTypes) {
			switch db.ColumnTypes[i] {
			case "number":
				typ = "numeric"
			case "boolean":
				typ = "boolean"
			}
		}
		dup := false
		for _, c := range tables[int(ti)] {
			dup = dup || c.name == colName[i]
		}
		if !dup {
			tables[int(ti)] = append(tables[int(ti)], col{colName[i], typ})
		}
	}
	pks := make([][]string, len(tables))
	var raw []json.RawMessage
	if err := json.Unmarshal(db.PrimaryKeys, &raw); err != nil && len(db.PrimaryKeys) > 0 {
		return "", fmt.Errorf("benchload: %s: primary_keys: %w", db.DBID, err)
	}
	for _, r := range raw {
		var one int
		var many []int
		if json.Unmarshal(r, &one) == nil {
			many = []int{one}
		} else if err := json.Unmarshal(r, &many); err != nil {
			return "", fmt.Errorf("benchload: %s: primary key %s: %w", db.DBID, r, err)
		}
		for _, c := range many {
			if c > 0 && c < len(colTable) {
				t := colTable[c]
				if !contains(pks[t], colName[c]) {
					pks[t] = append(pks[t], colName[c])
				}
			}
		}
	}
	var sb strings.Builder
	colType := map[int]string{}
	for i := range db.ColumnNames {
		colType[i] = "text"
		if i < len(db.ColumnTypes) && db.ColumnTypes[i] == "number" {
			colType[i] = "numeric"
		} else if i < len(db.ColumnTypes) && db.ColumnTypes[i] == "boolean" {
			colType[i] = "boolean"
		}
	}
	for ti, cols := range tables {
		tname := pgx.Identifier{strings.ToLower(db.TableNames[ti])}.Sanitize()
		fmt.Fprintf(&sb, "CREATE TABLE %s (\n", tname)
		for i, c := range cols {
			if i > 0 {
				sb.WriteString(",\n")
			}
			fmt.Fprintf(&sb, "    %s %s", pgx.Identifier{c.name}.Sanitize(), c.typ)
		}
		if len(pks[ti]) > 0 {
			fmt.Fprintf(&sb, ",\n    PRIMARY KEY (%s)", identList(pks[ti]))
		}
		sb.WriteString("\n);\n")
	}
	for _, fk := range db.ForeignKeys {
		from, to := fk[0], fk[1]
		if from <= 0 || to <= 0 || from >= len(colTable) || to >= len(colTable) {
			continue
		}
		tt := colTable[to]
		if len(pks[tt]) != 1 || pks[tt][0] != colName[to] || colType[from] != colType[to] {
			continue
		}
		fmt.Fprintf(&sb, "ALTER TABLE %s ADD FOREIGN KEY (%s) REFERENCES %s (%s);\n",
			pgx.Identifier{strings.ToLower(db.TableNames[colTable[from]])}.Sanitize(), pgx.Identifier{colName[from]}.Sanitize(),
			pgx.Identifier{strings.ToLower(db.TableNames[tt])}.Sanitize(), pgx.Identifier{colName[to]}.Sanitize())
	}
	return sb.String(), nil
}

func identList(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = pgx.Identifier{n}.Sanitize()
	}
	return strings.Join(out, ", ")
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
