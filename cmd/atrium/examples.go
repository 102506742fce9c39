package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/atriumdb/atrium/sqlgen"
)

const examplesUsage = `Usage:
  atrium examples add --dsn DSN --question Q --sql S [--note N]
      validate one question→SQL pair as the --dsn role and store it
  atrium examples import --dsn DSN [--dry-run] FILE
      validate and store many pairs (JSON array or JSON lines; - for stdin),
      all or none
  atrium examples list [--json]          the examples in the catalog
  atrium examples candidates [--json]    feedback that can become an example
  atrium examples promote ID...          turn candidate feedback into examples
  atrium examples disable ID...          keep examples but stop using them
  atrium examples enable ID...           use disabled examples again
  atrium examples remove ID...           delete examples

Examples live in atrium.examples in the catalog database (--catalog-dsn,
default --dsn). See docs/learning.md. Run 'atrium examples <command> --help'
for the flags.
`

// runExamples dispatches `atrium examples ...`.
func runExamples(ctx context.Context, env *cliEnv, args []string) error {
	if len(args) == 0 || isHelp(args[0]) {
		return nestedUsage(env, args, examplesUsage, "examples needs a subcommand: add, import, list, candidates, promote, disable, enable or remove")
	}
	switch args[0] {
	case "add":
		return runExamplesAdd(ctx, env, args[1:])
	case "import":
		return runExamplesImport(ctx, env, args[1:])
	case "list":
		return runExamplesList(ctx, env, args[1:])
	case "candidates":
		return runExamplesCandidates(ctx, env, args[1:])
	case "promote":
		return runExamplesPromote(ctx, env, args[1:])
	case "disable", "enable", "remove":
		return examplesChange.run(ctx, env, args[0], args[1:])
	default:
		return usageError{fmt.Sprintf("unknown examples subcommand %q (want add, import, list, candidates, promote, disable, enable or remove)", args[0])}
	}
}

// maxExampleQuestion bounds a question, in characters: an example's
// question is something a person asks, and it goes into prompts.
const maxExampleQuestion = 2000

// examplePair is one question→SQL pair to add, with the line it came
// from in an import file (0 for add).
type examplePair struct {
	Question string  `json:"question"`
	SQL      string  `json:"sql"`
	Note     *string `json:"note,omitempty"`
	line     int
}

// checkedExample is a pair that passed: its question cleaned, its SQL as
// stored, its tables.
type checkedExample struct {
	examplePair
	sql    string
	tables []string
}

// exampleChecker validates pairs on one connection to the database the
// examples are about, as that connection's role.
type exampleChecker struct {
	conn    *pgx.Conn
	up      *sqlgen.ConnUpstream
	role    string
	timeout time.Duration
}

func newExampleChecker(ctx context.Context, dsn string, timeout time.Duration) (*exampleChecker, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("connect to --dsn: %w", err)
	}
	c := &exampleChecker{conn: conn, up: sqlgen.NewConnUpstream(conn.PgConn()), timeout: timeout}
	if err := conn.QueryRow(ctx, "SELECT current_user").Scan(&c.role); err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("read the --dsn role: %w", err)
	}
	return c, nil
}

func (c *exampleChecker) Close(ctx context.Context) { c.conn.Close(context.WithoutCancel(ctx)) }

// check validates one pair: a question, and SQL that sqlgen.CheckExample
// accepts on the checker's session (one read-only SELECT, EXPLAIN as the
// role, inside a rolled-back READ ONLY transaction).
func (c *exampleChecker) check(ctx context.Context, p examplePair) (*checkedExample, error) {
	// One line: the question goes into prompts as a few-shot pair.
	q := strings.Join(strings.Fields(p.Question), " ")
	switch {
	case q == "":
		return nil, errors.New("the question is empty")
	case !utf8.ValidString(q):
		return nil, errors.New("the question is not valid UTF-8")
	case strings.IndexFunc(q, unicode.IsControl) >= 0:
		return nil, errors.New("the question holds control characters")
	case utf8.RuneCountInString(q) > maxExampleQuestion:
		return nil, fmt.Errorf("the question is longer than %d characters", maxExampleQuestion)
	}
	if p.Note != nil && strings.TrimSpace(*p.Note) == "" {
		p.Note = nil
	}
	res, err := sqlgen.CheckExample(ctx, c.up, p.SQL, c.timeout)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		msg := "the SQL was refused: " + serverDetail(err)
		if sqlState(err) == "42501" {
			msg += fmt.Sprintf(" (checked as role %s, the --dsn role: an example must be readable by the role that adds it)", c.role)
		}
		return nil, &exampleCheckError{msg: msg, err: err}
	}
	p.Question = q
	return &checkedExample{examplePair: p, sql: res.SQL, tables: res.Tables}, nil
}

// exampleCheckError is a pair refused by the checks; it keeps the check's
// error (and its SQLSTATE) for errors.As.
type exampleCheckError struct {
	msg string
	err error
}

func (e *exampleCheckError) Error() string { return e.msg }
func (e *exampleCheckError) Unwrap() error { return e.err }

// insertExampleSQL stores a checked example. added_by is the role the SQL
// was checked as, which may differ from the catalog connection's.
const insertExampleSQL = `INSERT INTO atrium.examples (question, sql, tables, added_by, source, note)
VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`

func insertExample(ctx context.Context, db interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, ex *checkedExample, role, source string) (int64, error) {
	var id int64
	if err := db.QueryRow(ctx, insertExampleSQL, ex.Question, ex.sql, ex.tables, role, source, ex.Note).Scan(&id); err != nil {
		return 0, catalogError("store the example", err)
	}
	return id, nil
}

// exampleFlags are the flags of add and import.
type exampleFlags struct {
	dsn, catalogDSN *string
	timeout         *time.Duration
}

func addExampleFlags(fs *flag.FlagSet) exampleFlags {
	return exampleFlags{
		dsn:        fs.String("dsn", "", "PostgreSQL connection URL of the database the examples are about; their SQL is checked as this connection's role (required)"),
		catalogDSN: fs.String("catalog-dsn", "", "database that holds the atrium catalog schema (default: --dsn)"),
		timeout:    fs.Duration("statement-timeout", 30*time.Second, "statement_timeout of each check (EXPLAIN computes no rows)"),
	}
}

// open connects the checker, and the catalog (the checker's connection
// when --catalog-dsn is not given). Callers must call the returned close.
func (f exampleFlags) open(ctx context.Context) (*exampleChecker, *pgx.Conn, func(), error) {
	if *f.dsn == "" {
		return nil, nil, nil, usageError{"--dsn is required"}
	}
	chk, err := newExampleChecker(ctx, *f.dsn, *f.timeout)
	if err != nil {
		return nil, nil, nil, err
	}
	if *f.catalogDSN == "" {
		return chk, chk.conn, func() { chk.Close(ctx) }, nil
	}
	cat, err := connectCatalog(ctx, *f.catalogDSN)
	if err != nil {
		chk.Close(ctx)
		return nil, nil, nil, err
	}
	return chk, cat, func() { cat.Close(context.WithoutCancel(ctx)); chk.Close(ctx) }, nil
}

func runExamplesAdd(ctx context.Context, env *cliEnv, args []string) error {
	fs := flag.NewFlagSet("examples add", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		fmt.Fprint(env.stderr, `Usage: atrium examples add --dsn DSN --question Q --sql S [--note N]

Checks S as the --dsn connection's role: exactly one read-only SELECT
(WITH ... SELECT and VALUES too) that parses, calls no function with side
effects, and passes EXPLAIN in a READ ONLY transaction that is rolled back.
Then stores it in atrium.examples with the tables it reads (source cli,
added_by that role).

`)
		fs.PrintDefaults()
	}
	ef := addExampleFlags(fs)
	question := fs.String("question", "", "the question, as a user would ask it (required)")
	sqlText := fs.String("sql", "", "the SQL that answers it (required)")
	note := fs.String("note", "", "free text for curators")
	if _, err := parseFlags(ctx, env, fs, args); err != nil {
		return err
	}
	if err := noArguments(fs); err != nil {
		return err
	}
	if *question == "" || *sqlText == "" {
		return usageError{"--question and --sql are required"}
	}
	chk, cat, closeAll, err := ef.open(ctx)
	if err != nil {
		return err
	}
	defer closeAll()
	p := examplePair{Question: *question, SQL: *sqlText}
	if *note != "" {
		p.Note = note
	}
	ex, err := chk.check(ctx, p)
	if err != nil {
		return err
	}
	id, err := insertExample(ctx, cat, ex, chk.role, "cli")
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "added example %d (tables: %s)\n", id, strings.Join(ex.tables, ", "))
	// Two enabled examples with one question: which SQL a question reuses
	// is then up to chance. Say so; the DBA decides.
	var same []int64
	rows, err := cat.Query(ctx, `SELECT id FROM atrium.examples
		WHERE enabled AND id <> $1 AND lower(btrim(question)) = lower(btrim($2)) ORDER BY id`, id, ex.Question)
	if err == nil {
		same, err = pgx.CollectRows(rows, pgx.RowTo[int64])
	}
	if err == nil && len(same) > 0 {
		fmt.Fprintf(env.stderr, "note: enabled examples %v ask the same question; disable the ones you do not want (atrium examples disable ID)\n", same)
	}
	return nil
}

func runExamplesImport(ctx context.Context, env *cliEnv, args []string) error {
	fs := flag.NewFlagSet("examples import", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		fmt.Fprint(env.stderr, `Usage: atrium examples import --dsn DSN [--dry-run] FILE

FILE (- for stdin) holds a JSON array of {"question": ..., "sql": ...,
"note": ...} objects (note optional), or one such object per line (JSON
lines). Every pair is checked as 'atrium examples add' checks one; if any
fails, each failure is reported with its line and nothing is stored.
Otherwise all are stored in one transaction (source import).

`)
		fs.PrintDefaults()
	}
	ef := addExampleFlags(fs)
	dryRun := fs.Bool("dry-run", false, "check every pair and report, store nothing")
	if _, err := parseFlags(ctx, env, fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError{"give exactly one FILE (- for stdin)"}
	}
	var in io.Reader
	if name := fs.Arg(0); name == "-" {
		in = os.Stdin
	} else {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	pairs, err := readExamplePairs(in)
	if err != nil {
		return err
	}
	if len(pairs) == 0 {
		return errors.New("the file holds no examples")
	}
	chk, cat, closeAll, err := ef.open(ctx)
	if err != nil {
		return err
	}
	defer closeAll()

	var ok []*checkedExample
	var failed []string
	for _, p := range pairs {
		ex, err := chk.check(ctx, p)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			failed = append(failed, fmt.Sprintf("line %d: %s", p.line, printable(err.Error(), 0)))
			continue
		}
		ok = append(ok, ex)
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d of %d examples failed the checks; nothing was imported:\n  %s", len(failed), len(pairs), strings.Join(failed, "\n  "))
	}
	if *dryRun {
		for _, ex := range ok {
			fmt.Fprintf(env.stdout, "line %d: ok (tables: %s) %s\n", ex.line, strings.Join(ex.tables, ", "), printable(ex.Question, 80))
		}
		fmt.Fprintf(env.stdout, "%d examples passed the checks; nothing stored (--dry-run)\n", len(ok))
		return nil
	}
	var first, last int64
	err = pgx.BeginFunc(ctx, cat, func(tx pgx.Tx) error {
		for i, ex := range ok {
			id, err := insertExample(ctx, tx, ex, chk.role, "import")
			if err != nil {
				return fmt.Errorf("line %d: %w", ex.line, err)
			}
			if i == 0 {
				first = id
			}
			last = id
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("nothing was imported: %w", err)
	}
	fmt.Fprintf(env.stdout, "imported %d examples (ids %d to %d)\n", len(ok), first, last)
	return nil
}

// maxImportBytes bounds an import file.
const maxImportBytes = 64 << 20

// readExamplePairs reads a JSON array of pairs, or JSON lines, noting the
// line each pair starts on. Unknown keys and values of the wrong type are
// errors naming the line: a typo in "question" must not import an empty
// question.
func readExamplePairs(r io.Reader) ([]examplePair, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxImportBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read the file: %w", err)
	}
	if len(data) > maxImportBytes {
		return nil, fmt.Errorf("the file is larger than %d MiB", maxImportBytes>>20)
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	lineAt := func(off int) int { return 1 + bytes.Count(data[:off], []byte("\n")) }
	decodePair := func(raw []byte, line int) (examplePair, error) {
		var p examplePair
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&p); err != nil {
			return p, fmt.Errorf("line %d: not a {\"question\", \"sql\", \"note\"} object: %w", line, err)
		}
		p.line = line
		return p, nil
	}
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		dec := json.NewDecoder(bytes.NewReader(data))
		if _, err := dec.Token(); err != nil {
			return nil, fmt.Errorf("line 1: %w", err)
		}
		var out []examplePair
		for dec.More() {
			off := int(dec.InputOffset())
			// The next value starts after the separating comma and blanks.
			for off < len(data) && strings.IndexByte(" \t\r\n,", data[off]) >= 0 {
				off++
			}
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return nil, fmt.Errorf("line %d: %w", lineAt(off), err)
			}
			p, err := decodePair(raw, lineAt(off))
			if err != nil {
				return nil, err
			}
			out = append(out, p)
		}
		if _, err := dec.Token(); err != nil {
			return nil, fmt.Errorf("line %d: %w", lineAt(int(dec.InputOffset())), err)
		}
		if rest := bytes.TrimSpace(data[dec.InputOffset():]); len(rest) > 0 {
			return nil, fmt.Errorf("line %d: text after the JSON array", lineAt(int(dec.InputOffset())))
		}
		return out, nil
	}
	var out []examplePair
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), maxImportBytes)
	for line := 1; sc.Scan(); line++ {
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		p, err := decodePair(text, line)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, sc.Err()
}

// exampleRow is one atrium.examples row as list prints it.
type exampleRow struct {
	ID         int64     `json:"id"`
	Question   string    `json:"question"`
	SQL        string    `json:"sql"`
	Tables     []string  `json:"tables"`
	AddedBy    string    `json:"added_by"`
	AddedAt    time.Time `json:"added_at"`
	Source     string    `json:"source"`
	Enabled    bool      `json:"enabled"`
	FeedbackID *int64    `json:"feedback_id,omitempty"`
	Note       *string   `json:"note,omitempty"`
}

func runExamplesList(ctx context.Context, env *cliEnv, args []string) error {
	fs := flag.NewFlagSet("examples list", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	setUsage(env, fs, "atrium examples list --dsn DSN [--json]",
		"Lists atrium.examples: whether each is enabled, its source, who added it and when, its tables and question.")
	dsn, catalogDSN := catalogFlags(fs)
	asJSON := fs.Bool("json", false, "print a JSON array with every column, SQL included")
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
	_, err = listing[exampleRow]{
		table: "atrium.examples",
		query: `SELECT id, question, sql, tables, added_by, added_at, source, enabled, feedback_id, note
		FROM atrium.examples ORDER BY id`,
		scan: func(r pgx.CollectableRow) (exampleRow, error) {
			var e exampleRow
			err := r.Scan(&e.ID, &e.Question, &e.SQL, &e.Tables, &e.AddedBy, &e.AddedAt, &e.Source, &e.Enabled, &e.FeedbackID, &e.Note)
			return e, err
		},
		header: "ID\tENABLED\tSOURCE\tADDED_BY\tADDED_AT\tTABLES\tQUESTION",
		line: func(e exampleRow) string {
			return fmt.Sprintf("%d\t%t\t%s\t%s\t%s\t%s\t%s", e.ID, e.Enabled, e.Source, printable(e.AddedBy, 30),
				e.AddedAt.UTC().Format(time.DateTime), printable(strings.Join(e.Tables, ","), 60), printable(e.Question, 70))
		},
	}.print(ctx, conn, env.stdout, *asJSON)
	return err
}

// candidateRow is one unpromoted candidate feedback row.
type candidateRow struct {
	ID       int64     `json:"id"`
	GivenAt  time.Time `json:"given_at"`
	Role     string    `json:"role_name"`
	Verdict  string    `json:"verdict"`
	Question string    `json:"question"`
	SQL      *string   `json:"sql"`
	Tables   []string  `json:"tables"`
}

func runExamplesCandidates(ctx context.Context, env *cliEnv, args []string) error {
	fs := flag.NewFlagSet("examples candidates", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	setUsage(env, fs, "atrium examples candidates --dsn DSN [--json]",
		"Lists feedback that can become an example (a good answer, or a corrected SQL that validates); promote one with 'atrium examples promote ID'.")
	dsn, catalogDSN := catalogFlags(fs)
	asJSON := fs.Bool("json", false, "print a JSON array, SQL included")
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
	list, err := listing[candidateRow]{
		table: "atrium.feedback",
		query: `SELECT id, given_at, role_name, verdict, question, coalesce(corrected_sql, sql), tables
		FROM atrium.feedback WHERE candidate AND example_id IS NULL ORDER BY given_at, id`,
		scan: func(r pgx.CollectableRow) (candidateRow, error) {
			var c candidateRow
			err := r.Scan(&c.ID, &c.GivenAt, &c.Role, &c.Verdict, &c.Question, &c.SQL, &c.Tables)
			return c, err
		},
		header: "ID\tGIVEN_AT\tROLE\tVERDICT\tTABLES\tQUESTION",
		line: func(c candidateRow) string {
			return fmt.Sprintf("%d\t%s\t%s\t%s\t%s\t%s", c.ID, c.GivenAt.UTC().Format(time.DateTime), printable(c.Role, 30),
				c.Verdict, printable(strings.Join(c.Tables, ","), 60), printable(c.Question, 70))
		},
	}.print(ctx, conn, env.stdout, *asJSON)
	if err != nil {
		return err
	}
	if len(list) > 0 && !*asJSON {
		fmt.Fprintln(env.stderr, "promote with: atrium examples promote ID...")
	}
	return nil
}

func runExamplesPromote(ctx context.Context, env *cliEnv, args []string) error {
	fs := flag.NewFlagSet("examples promote", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		fmt.Fprint(env.stderr, `Usage: atrium examples promote --dsn DSN FEEDBACK_ID...

Turns candidate feedback rows (see 'atrium examples candidates') into
examples with atrium.promote_feedback, all in one transaction: when one id
is missing (P0002) or not a candidate (22023), none is promoted. An id
already promoted reports its existing example.

`)
		fs.PrintDefaults()
	}
	dsn, catalogDSN := catalogFlags(fs)
	if _, err := parseFlags(ctx, env, fs, args); err != nil {
		return err
	}
	ids, err := parseIDs(fs.Args(), "feedback")
	if err != nil {
		return err
	}
	conn, err := openCatalogFlags(ctx, *dsn, *catalogDSN)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	examples := make([]int64, len(ids))
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		for i, id := range ids {
			if err := tx.QueryRow(ctx, "SELECT atrium.promote_feedback($1)", id).Scan(&examples[i]); err != nil {
				return catalogError(fmt.Sprintf("promote feedback %d", id), err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("nothing was promoted: %w", err)
	}
	for i, id := range ids {
		fmt.Fprintf(env.stdout, "feedback %d: example %d\n", id, examples[i])
	}
	return nil
}

// examplesChange disables, enables or removes examples.
var examplesChange = idChange{
	command: "examples", noun: "example", plural: "examples",
	queries: map[string]string{
		"disable": "UPDATE atrium.examples SET enabled = false WHERE id = ANY($1) RETURNING id",
		"enable":  "UPDATE atrium.examples SET enabled = true WHERE id = ANY($1) RETURNING id",
		"remove":  "DELETE FROM atrium.examples WHERE id = ANY($1) RETURNING id",
	},
	past: map[string]string{"disable": "disabled", "enable": "enabled", "remove": "removed"},
	what: map[string]string{
		"disable": "Keeps examples but stops using them for retrieval, prompts and exact answers.",
		"enable":  "Uses disabled examples again.",
		"remove":  "Deletes examples.",
	},
}
