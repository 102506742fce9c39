// Command renamed writes a copy of a Spider-format benchmark whose schemas
// are renamed word by word (synonyms people use for a schema word,
// identifier abbreviations, words run together: the renamer of `atrium
// train-atr --augment-schemas`), for measuring retrieval on schema names a
// scorer was not shaped on, as the kept-back real-world benchmarks of
// issue 10 are. The questions keep their wording; each one's gold SQL is
// replaced by a SELECT over its gold tables' new names, which is all
// `atrium eval` reads of it. Sample values are not carried over: compare
// against the original benchmark's tables.json and questions alone (the
// -plain directory), not against a run with its database dumps.
//
// With -comments the renamed copy is documented, as real databases with
// terse identifiers often are: databases/<db_id>.sql creates its tables and
// comments every table and column with its original name in words
// (`COMMENT ON COLUMN "cust_cntry" IS 'customer country'`), and so is the
// -plain copy (its comments repeat its names), so a scorer's use of
// comments can be measured both where names are terse and where they are not.
// With -prose as well, the comments are written as real data dictionaries
// write them (BIRD's column descriptions, for one): sentences that repeat the
// table's words in every column's comment and carry the filler such prose has
// ("This field represents the unique identifier of the customer."), so that
// what a comment's common words do to ranking can be measured too.
//
//	go run ./retriever/evaluate/renamed -bench ../shared/bench/spider -out /tmp/spider_ren -plain /tmp/spider_plain [-comments [-prose]]
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/atriumdb/atrium/catalog/benchload"
	"github.com/atriumdb/atrium/internal/ident"
	"github.com/atriumdb/atrium/retriever/atrtrain"
)

// entry is one question of the written file (Spider's fields eval reads).
type entry struct {
	DBID     string `json:"db_id"`
	Question string `json:"question"`
	Query    string `json:"query"`
}

func main() {
	bench := flag.String("bench", "../shared/bench/spider", "Spider-format benchmark directory (tables.json and the questions file)")
	questions := flag.String("questions", "dev.json", "questions file of -bench")
	out := flag.String("out", "", "directory to write the renamed tables.json and dev.json into (required)")
	plain := flag.String("plain", "", "also write the original schemas and the same questions here, without rows (documented alike with -comments), as the like-for-like reference (optional)")
	seed := flag.Uint64("seed", 99, "renamer seed")
	comments := flag.Bool("comments", false, "document the renamed copy: comment every table and column with its original name in words (databases/<db_id>.sql)")
	d := atrtrain.DefaultRenameOptions(0)
	renameWord := flag.Float64("rename-words", d.RenameWord, "chance that an identifier word is replaced by a synonym or an abbreviation (0 keeps every word)")
	concat := flag.Float64("concat", d.Concat, "chance that an identifier's words are run together (1 with -rename-words 0: every identifier as PostgreSQL folds an unquoted camelCase one, customerName → customername)")
	abbrevOnly := flag.Bool("abbreviations-only", false, "replace words by identifier abbreviations (abbrev.tsv) only, never by synonyms")
	prose := flag.Bool("prose", false, "with -comments: write each comment as a data dictionary's sentence that names the table too, not as the original name's words")
	flag.Parse()
	if *prose && !*comments {
		fmt.Fprintln(os.Stderr, "renamed: -prose needs -comments")
		os.Exit(2)
	}
	if *out == "" {
		fmt.Fprintln(os.Stderr, "renamed: -out is required")
		os.Exit(2)
	}
	if *renameWord < 0 || *renameWord > 1 || *concat < 0 || *concat > 1 {
		fmt.Fprintln(os.Stderr, "renamed: -rename-words and -concat are chances between 0 and 1")
		os.Exit(2)
	}
	o := atrtrain.RenameOptions{Seed: *seed, RenameWord: *renameWord, Concat: *concat, AbbreviationsOnly: *abbrevOnly}
	doc := documenter{on: *comments, prose: *prose, seed: *seed}
	if err := run(*bench, *questions, *out, *plain, o, doc); err != nil {
		fmt.Fprintln(os.Stderr, "renamed:", err)
		os.Exit(1)
	}
}

func run(benchDir, file, out, plain string, o atrtrain.RenameOptions, doc documenter) error {
	b, err := benchload.LoadBench(benchDir, file)
	if err != nil {
		return err
	}
	dbs, tables := atrtrain.RenameBench(b, o)
	ren := make([]entry, 0, len(b.Questions))
	orig := make([]entry, 0, len(b.Questions))
	skipped := 0
	for i := range b.Questions {
		q := &b.Questions[i]
		gold, err := b.GoldTables(q)
		if err != nil {
			skipped++ // a gold SQL neither parser reads: eval skips it too
			continue
		}
		names := make([]string, len(gold))
		origNames := make([]string, len(gold))
		for j, g := range gold {
			nt, ok := tables[g]
			if !ok {
				return fmt.Errorf("question %d: gold table %s has no renamed copy", i, g)
			}
			_, t, _ := strings.Cut(nt, ".")
			names[j] = strconv.Quote(t)
			_, t, _ = strings.Cut(g, ".")
			origNames[j] = strconv.Quote(t)
		}
		ren = append(ren, entry{DBID: q.DBID + "_aug", Question: q.Question, Query: "SELECT * FROM " + strings.Join(names, ", ")})
		orig = append(orig, entry{DBID: q.DBID, Question: q.Question, Query: "SELECT * FROM " + strings.Join(origNames, ", ")})
	}
	if err := write(out, dbs, ren); err != nil {
		return err
	}
	if doc.on {
		for _, d := range dbs {
			orig := b.DBs[strings.ToLower(strings.TrimSuffix(d.DBID, "_aug"))]
			if err := doc.write(out, d, *orig); err != nil {
				return err
			}
		}
	}
	if plain != "" {
		odbs := make([]benchload.Database, 0, len(b.DBs))
		for _, d := range dbs {
			odbs = append(odbs, *b.DBs[strings.ToLower(strings.TrimSuffix(d.DBID, "_aug"))])
		}
		if err := write(plain, odbs, orig); err != nil {
			return err
		}
		if doc.on {
			for _, d := range odbs {
				if err := doc.write(plain, d, d); err != nil {
					return err
				}
			}
		}
	}
	fmt.Fprintf(os.Stderr, "renamed: %d databases, %d questions (%d skipped: gold SQL unreadable)\n", len(dbs), len(ren), skipped)
	return nil
}

// documenter says how the copies are documented.
type documenter struct {
	on, prose bool
	seed      uint64
}

// write writes databases/<db_id>.sql for ren, a copy of orig (renamed, or
// orig itself): its tables, and a comment on each table and column carrying
// the original identifier's words (with prose, in a sentence). Columns
// correspond by position.
func (doc documenter) write(dir string, ren, orig benchload.Database) error {
	ddl, err := benchload.SchemaDDL(ren)
	if err != nil {
		return err
	}
	var sb strings.Builder
	sb.WriteString(ddl)
	for i, t := range ren.TableNames {
		if i < len(orig.TableNames) {
			c := ident.Words(orig.TableNames[i])
			if doc.prose {
				c = proseTable(c, doc.pick(ren.DBID, t))
			}
			fmt.Fprintf(&sb, "COMMENT ON TABLE %s IS %s;\n", pgx.Identifier{strings.ToLower(t)}.Sanitize(), literal(c))
		}
	}
	done := map[string]bool{}
	for i, cn := range ren.ColumnNames {
		ti, _ := cn[0].(float64)
		name, _ := cn[1].(string)
		if ti < 0 || int(ti) >= len(ren.TableNames) || i >= len(orig.ColumnNames) {
			continue
		}
		on, _ := orig.ColumnNames[i][1].(string)
		target := pgx.Identifier{strings.ToLower(ren.TableNames[int(ti)]), strings.ToLower(name)}.Sanitize()
		if done[target] {
			continue // SchemaDDL keeps a table's first column of a name
		}
		done[target] = true
		c := ident.Words(on)
		if doc.prose {
			c = proseColumn(c, ident.Words(orig.TableNames[int(ti)]), doc.pick(ren.DBID, target))
		}
		fmt.Fprintf(&sb, "COMMENT ON COLUMN %s IS %s;\n", target, literal(c))
	}
	if err := os.MkdirAll(filepath.Join(dir, "databases"), 0o755); err != nil {
		return err
	}
	path := filepath.Join(dir, "databases", ren.DBID+".sql")
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// pick draws a template number for one object, the same on every run.
func (doc documenter) pick(parts ...string) int {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d", doc.seed)
	for _, p := range parts {
		h.Write([]byte{0})
		h.Write([]byte(p))
	}
	return int(h.Sum64() % 1024)
}

// proseTable and proseColumn write the sentences data dictionaries hold;
// the templates follow BIRD's and vendors' sample databases' descriptions.
func proseTable(words string, n int) string {
	switch n % 4 {
	case 0:
		return "Information about each " + words + "."
	case 1:
		return "This table stores the " + words + " records, one row per " + words + "."
	case 2:
		return "List of " + words + " and their details."
	default:
		return words
	}
}

func proseColumn(words, table string, n int) string {
	w := strings.Fields(words)
	if len(w) > 0 && (w[len(w)-1] == "id" || w[len(w)-1] == "code") {
		switch n % 3 {
		case 0:
			of := strings.Join(w[:len(w)-1], " ")
			if of == "" {
				of = table
			}
			return "the unique id of the " + of
		case 1:
			return "This field represents the " + words + " identification number of the " + table + " record."
		default:
			return words + " (unique identifier)"
		}
	}
	switch n % 5 {
	case 0:
		return "the " + words + " of the " + table
	case 1:
		return "This field represents the " + words + " of the " + table + "."
	case 2:
		return words + ". commonsense evidence: the value is recorded for each " + table + "."
	case 3:
		return "The " + table + "'s " + words + " value"
	default:
		return words
	}
}

func literal(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func write(dir string, dbs []benchload.Database, qs []entry) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, v := range map[string]any{"tables.json": dbs, "dev.json": qs} {
		data, err := json.MarshalIndent(v, "", " ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name), append(data, '\n'), 0o644); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	return nil
}
