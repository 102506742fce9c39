package benchload

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// Schema is the PostgreSQL schema the database lives in.
func (d *Database) Schema() string { return SchemaName(d.DBID) }

// Column returns the table index and name of column i of
// column_names_original (false for the `*` pseudo-column and bad indexes).
func (d *Database) Column(i int) (int, string, bool) {
	if i < 0 || i >= len(d.ColumnNames) {
		return 0, "", false
	}
	ti, ok := d.ColumnNames[i][0].(float64)
	name, ok2 := d.ColumnNames[i][1].(string)
	if !ok || !ok2 || ti < 0 {
		return 0, "", false
	}
	return int(ti), name, true
}

// Question is one question of a benchmark.
type Question struct {
	DBID     string          `json:"db_id"`
	Question string          `json:"question"`
	Query    string          `json:"query"`
	SQL2     string          `json:"SQL"`
	Evidence string          `json:"evidence"`
	Parsed   json.RawMessage `json:"sql"`
	// ExcludeDBs are databases left out of the pool for this question (an
	// unanswerable set asks a question without its own database).
	ExcludeDBs []string `json:"exclude_dbs,omitempty"`
	// PoolDBs, when set, restrict the pool to these databases for this
	// question (deployment-sized pools drawn from the training databases).
	PoolDBs []string `json:"pool_dbs,omitempty"`
	// Kind labels a group of questions in a report (unanswerable sets:
	// "offtopic", "foreign_db").
	Kind string `json:"kind,omitempty"`
}

// Unanswerable reports whether the question has no gold SQL: no table of
// the pool answers it, and the right retrieval is an empty set.
func (q *Question) Unanswerable() bool { return strings.TrimSpace(q.GoldSQL()) == "" }

// GoldSQL is the gold query (Spider's query, BIRD's SQL).
func (q *Question) GoldSQL() string {
	if q.Query != "" {
		return q.Query
	}
	return q.SQL2
}

// Bench is a Spider-format benchmark: its schemas and one question file.
type Bench struct {
	Name      string
	Dir       string
	DBs       map[string]*Database // by lower-case db_id
	Questions []Question
}

// LoadBench reads DIR/tables.json and the questions from file (a name in
// DIR; empty means dev.json, else questions.json).
func LoadBench(dir, file string) (*Bench, error) {
	b := &Bench{Name: filepath.Base(filepath.Clean(dir)), Dir: dir, DBs: map[string]*Database{}}
	dbs, err := ReadTables(dir)
	if err != nil {
		return nil, err
	}
	for i := range dbs {
		b.DBs[strings.ToLower(dbs[i].DBID)] = &dbs[i]
	}
	if file == "" {
		file = "dev.json"
		if _, err := os.Stat(filepath.Join(dir, file)); errors.Is(err, os.ErrNotExist) {
			file = "questions.json"
		}
	}
	qs, err := ReadQuestions(questionsPath(dir, file))
	if err != nil {
		return nil, err
	}
	b.Questions = qs
	return b, nil
}

// questionsPath resolves a questions file: a bare name lives in the
// benchmark directory, a path (with a separator) is taken as it is.
func questionsPath(dir, file string) string {
	if strings.ContainsRune(file, os.PathSeparator) || filepath.IsAbs(file) {
		return file
	}
	return filepath.Join(dir, file)
}

// ReadQuestions decodes a Spider-format questions file.
func ReadQuestions(path string) ([]Question, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read benchmark questions: %w", err)
	}
	var qs []Question
	if err := json.Unmarshal(raw, &qs); err != nil {
		return nil, fmt.Errorf("decode %s: %w", path, err)
	}
	return qs, nil
}

// PoolDBIDs are the databases the questions need in the pool: their own,
// the ones they exclude (an exclusion means the rest of the pool is
// searched) and their explicit pools, sorted.
func (b *Bench) PoolDBIDs() []string {
	seen := map[string]bool{}
	var out []string
	add := func(id string) {
		if id != "" && !seen[strings.ToLower(id)] {
			seen[strings.ToLower(id)] = true
			out = append(out, id)
		}
	}
	for i := range b.Questions {
		q := &b.Questions[i]
		add(q.DBID)
		for _, d := range q.ExcludeDBs {
			add(d)
		}
		for _, d := range q.PoolDBs {
			add(d)
		}
	}
	sort.Strings(out)
	return out
}

// GoldTables returns the tables ("schema.table", lower case) the question's
// gold SQL references: every RangeVar of PostgreSQL's parse tree, subqueries
// and set operations included, CTE names excluded. When PostgreSQL's parser
// rejects the SQL (Spider's SQLite dialect has a few such queries), Spider's
// own parsed form is used.
func (b *Bench) GoldTables(q *Question) ([]string, error) {
	db := b.DBs[strings.ToLower(q.DBID)]
	if db == nil {
		return nil, fmt.Errorf("question names unknown database %q", q.DBID)
	}
	known := map[string]bool{}
	for _, t := range db.TableNames {
		known[strings.ToLower(t)] = true
	}
	names, err := goldFromSQL(q.GoldSQL())
	if err == nil {
		var out []string
		for _, n := range names {
			if known[n] {
				out = append(out, db.Schema()+"."+n)
			}
		}
		if len(out) > 0 {
			return dedupSorted(out), nil
		}
	}
	out := goldFromSpider(db, q.Parsed)
	if len(out) == 0 {
		if err == nil {
			err = errors.New("no known table referenced")
		}
		return nil, fmt.Errorf("gold tables of %q: %w", q.GoldSQL(), err)
	}
	return dedupSorted(out), nil
}

func dedupSorted(s []string) []string {
	sort.Strings(s)
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// goldFromSQL parses sql with pg_query and collects RangeVar relation names
// that are not CTE names.
func goldFromSQL(sql string) ([]string, error) {
	js, err := pg_query.ParseToJSON(sql)
	if err != nil {
		return nil, fmt.Errorf("parse gold SQL: %w", err)
	}
	var tree any
	if err := json.Unmarshal([]byte(js), &tree); err != nil {
		return nil, fmt.Errorf("decode parse tree: %w", err)
	}
	ctes := map[string]bool{}
	var rels []string
	var walk func(v any)
	walk = func(v any) {
		switch n := v.(type) {
		case map[string]any:
			if rv, ok := n["RangeVar"].(map[string]any); ok {
				if name, ok := rv["relname"].(string); ok {
					rels = append(rels, strings.ToLower(name))
				}
			}
			if ce, ok := n["CommonTableExpr"].(map[string]any); ok {
				if name, ok := ce["ctename"].(string); ok {
					ctes[strings.ToLower(name)] = true
				}
			}
			for _, c := range n {
				walk(c)
			}
		case []any:
			for _, c := range n {
				walk(c)
			}
		}
	}
	walk(tree)
	var out []string
	for _, r := range rels {
		if !ctes[r] {
			out = append(out, r)
		}
	}
	return out, nil
}

// goldFromSpider walks Spider's parsed SQL for ["table_unit", i] entries.
func goldFromSpider(db *Database, parsed json.RawMessage) []string {
	if len(parsed) == 0 {
		return nil
	}
	var tree any
	if err := json.Unmarshal(parsed, &tree); err != nil {
		return nil
	}
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch n := v.(type) {
		case map[string]any:
			for _, c := range n {
				walk(c)
			}
		case []any:
			if len(n) == 2 {
				if s, ok := n[0].(string); ok && s == "table_unit" {
					if f, ok := n[1].(float64); ok && int(f) >= 0 && int(f) < len(db.TableNames) {
						out = append(out, db.Schema()+"."+strings.ToLower(db.TableNames[int(f)]))
					}
					return
				}
			}
			for _, c := range n {
				walk(c)
			}
		}
	}
	walk(tree)
	return out
}

// AnsweredElsewhere reports whether a database of pool (db_ids) other than
// own has tables named like every one of gold ("schema.table"), case,
// separators and a plural s folded: "How many singers do we have?" asked
// without concert_singer is still answered by singer.singer, so it is no
// unanswerable question. The unanswerable sets of `atrium eval` and the
// unanswerable training pools of `atrium train-atr` both use this rule.
func (b *Bench) AnsweredElsewhere(own string, gold, pool []string) bool {
	if len(gold) == 0 {
		return false
	}
	for _, id := range pool {
		if strings.EqualFold(id, own) {
			continue
		}
		db := b.DBs[strings.ToLower(id)]
		if db == nil {
			continue
		}
		names := map[string]bool{}
		for _, t := range db.TableNames {
			names[foldTableName(t)] = true
		}
		all := true
		for _, g := range gold {
			_, t, _ := strings.Cut(g, ".")
			if !names[foldTableName(t)] {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

// foldTableName folds case, separators and a plural s, so singer and
// Singers meet.
func foldTableName(name string) string {
	n := strings.NewReplacer("_", "", " ", "").Replace(strings.ToLower(name))
	return strings.TrimSuffix(n, "s")
}
