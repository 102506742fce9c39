package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/atriumdb/atrium/catalog"
)

const glossaryUsage = `Usage:
  atrium glossary add --dsn DSN --term T --definition D [--sql-fragment F] [--tables s.t,...]
      add a reviewed business term
  atrium glossary list [--unreviewed] [--json]
  atrium glossary review ID...      mark entries (e.g. proposed by an LLM) reviewed
  atrium glossary remove ID...      delete entries

The glossary is atrium.glossary in the catalog database (--dsn, or
--catalog-dsn). Atrium uses reviewed entries only. See docs/learning.md.
Run 'atrium glossary <command> --help' for the flags.
`

// runGlossary dispatches `atrium glossary ...`.
func runGlossary(ctx context.Context, env *cliEnv, args []string) error {
	if len(args) == 0 || isHelp(args[0]) {
		return nestedUsage(env, args, glossaryUsage, "glossary needs a subcommand: add, list, review or remove")
	}
	switch args[0] {
	case "add":
		return runGlossaryAdd(ctx, env, args[1:])
	case "list":
		return runGlossaryList(ctx, env, args[1:])
	case "review", "remove":
		return glossaryChange.run(ctx, env, args[0], args[1:])
	default:
		return usageError{fmt.Sprintf("unknown glossary subcommand %q (want add, list, review or remove)", args[0])}
	}
}

// resolveCatalogTables maps each name to the catalogued table it names:
// schema.table exactly as atrium.tables has it, or a bare table name that
// only one schema has. Unknown and ambiguous names are errors.
func resolveCatalogTables(ctx context.Context, conn *pgx.Conn, names []string) ([]string, error) {
	out := []string{}
	seen := map[string]bool{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		rows, err := conn.Query(ctx, `SELECT schema_name || '.' || table_name FROM atrium.tables
			WHERE schema_name || '.' || table_name = $1
			   OR (table_name = $1 AND NOT EXISTS (SELECT 1 FROM atrium.tables WHERE schema_name || '.' || table_name = $1))
			ORDER BY 1`, n)
		if err != nil {
			return nil, catalogError("look up the tables", err)
		}
		found, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return nil, catalogError("look up the tables", err)
		}
		switch len(found) {
		case 0:
			return nil, fmt.Errorf("table %q is not in the catalog (run `atrium catalog sync`, or name it as schema.table)", n)
		case 1:
		default:
			return nil, fmt.Errorf("table %q is ambiguous: name one of %s", n, strings.Join(found, ", "))
		}
		if !seen[found[0]] {
			seen[found[0]] = true
			out = append(out, found[0])
		}
	}
	return out, nil
}

func runGlossaryAdd(ctx context.Context, env *cliEnv, args []string) error {
	fs := flag.NewFlagSet("glossary add", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		fmt.Fprint(env.stderr, `Usage: atrium glossary add --dsn DSN --term T --definition D [--sql-fragment F] [--tables s.t,...]

Adds a reviewed term to atrium.glossary (source cli). The term is unique
ignoring case. --tables must be catalogued tables (schema.table, or a table
name only one schema has); --sql-fragment must be one SQL expression or
condition, e.g. "status = 'active'": it is shown to the LLM, never run.

`)
		fs.PrintDefaults()
	}
	dsn, catalogDSN := catalogFlags(fs)
	term := fs.String("term", "", "the term as users say it (required)")
	def := fs.String("definition", "", "what it means, in words (required)")
	frag := fs.String("sql-fragment", "", "SQL expression or condition that expresses the term")
	tables := fs.String("tables", "", "comma-separated catalogued tables the term is about")
	if _, err := parseFlags(ctx, env, fs, args); err != nil {
		return err
	}
	if err := noArguments(fs); err != nil {
		return err
	}
	if *term == "" || *def == "" {
		return usageError{"--term and --definition are required"}
	}
	t, err := catalog.CleanGlossaryTerm(*term)
	if err != nil {
		return usageError{"--term: " + err.Error()}
	}
	d, err := catalog.CleanGlossaryDefinition(*def)
	if err != nil {
		return usageError{"--definition: " + err.Error()}
	}
	var fragment *string
	if strings.TrimSpace(*frag) != "" {
		f, err := catalog.CheckGlossaryFragment(*frag)
		if err != nil {
			return usageError{"--sql-fragment: " + err.Error()}
		}
		fragment = &f
	}
	conn, err := openCatalogFlags(ctx, *dsn, *catalogDSN)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	tbls, err := resolveCatalogTables(ctx, conn, strings.Split(*tables, ","))
	if err != nil {
		return err
	}
	var id int64
	err = conn.QueryRow(ctx, `INSERT INTO atrium.glossary (term, definition, sql_fragment, tables, reviewed, source)
		VALUES ($1, $2, $3, $4, true, 'cli') ON CONFLICT ((lower(btrim(term)))) DO NOTHING RETURNING id`,
		t, d, fragment, tbls).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		var other int64
		var otherTerm string
		if err := conn.QueryRow(ctx, "SELECT id, term FROM atrium.glossary WHERE lower(btrim(term)) = lower(btrim($1))", t).Scan(&other, &otherTerm); err != nil {
			return catalogError("look up the existing term", err)
		}
		return fmt.Errorf("the glossary already has %q (id %d); change it with SQL or remove it first", printable(otherTerm, 0), other)
	}
	if err != nil {
		return catalogError("store the glossary entry", err)
	}
	fmt.Fprintf(env.stdout, "added glossary entry %d: %s\n", id, printable(t, 0))
	return nil
}

// glossaryRow is one atrium.glossary row as list prints it.
type glossaryRow struct {
	ID          int64     `json:"id"`
	Term        string    `json:"term"`
	Definition  string    `json:"definition"`
	SQLFragment *string   `json:"sql_fragment"`
	Tables      []string  `json:"tables"`
	Reviewed    bool      `json:"reviewed"`
	Source      string    `json:"source"`
	AddedBy     string    `json:"added_by"`
	AddedAt     time.Time `json:"added_at"`
}

func runGlossaryList(ctx context.Context, env *cliEnv, args []string) error {
	fs := flag.NewFlagSet("glossary list", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	setUsage(env, fs, "atrium glossary list --dsn DSN [--unreviewed] [--json]",
		"Lists atrium.glossary: reviewed entries, which Atrium uses, and unreviewed ones, which it does not.")
	dsn, catalogDSN := catalogFlags(fs)
	unreviewed := fs.Bool("unreviewed", false, "only entries not yet reviewed (e.g. proposed by catalog sync's LLM)")
	asJSON := fs.Bool("json", false, "print a JSON array with every column")
	if _, err := parseFlags(ctx, env, fs, args); err != nil {
		return err
	}
	if err := noArguments(fs); err != nil {
		return err
	}
	conn, err := openCatalogFlags(ctx, *dsn, *catalogDSN)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	_, err = listing[glossaryRow]{
		table: "atrium.glossary",
		query: `SELECT id, term, definition, sql_fragment, tables, reviewed, source, added_by, added_at
		FROM atrium.glossary WHERE NOT (reviewed AND $1) ORDER BY lower(term), id`,
		args: []any{*unreviewed},
		scan: func(r pgx.CollectableRow) (glossaryRow, error) {
			var g glossaryRow
			err := r.Scan(&g.ID, &g.Term, &g.Definition, &g.SQLFragment, &g.Tables, &g.Reviewed, &g.Source, &g.AddedBy, &g.AddedAt)
			return g, err
		},
		header: "ID\tREVIEWED\tSOURCE\tTERM\tTABLES\tDEFINITION",
		line: func(g glossaryRow) string {
			return fmt.Sprintf("%d\t%t\t%s\t%s\t%s\t%s", g.ID, g.Reviewed, g.Source, printable(g.Term, 40),
				printable(strings.Join(g.Tables, ","), 50), printable(g.Definition, 70))
		},
	}.print(ctx, conn, env.stdout, *asJSON)
	return err
}

// glossaryChange reviews or removes glossary entries.
var glossaryChange = idChange{
	command: "glossary", noun: "glossary entry", plural: "glossary entries",
	queries: map[string]string{
		"review": "UPDATE atrium.glossary SET reviewed = true WHERE id = ANY($1) RETURNING id",
		"remove": "DELETE FROM atrium.glossary WHERE id = ANY($1) RETURNING id",
	},
	past: map[string]string{"review": "reviewed", "remove": "removed"},
	what: map[string]string{
		"review": "Marks glossary entries reviewed (for example those catalog sync's LLM proposed): retrieval and prompts use reviewed entries only.",
		"remove": "Deletes glossary entries.",
	},
}
