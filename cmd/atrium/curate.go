package main

// Helpers shared by the curation commands (atrium examples, atrium
// glossary): connections, ids, errors and printing untrusted text.

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/atriumdb/atrium/proxy"
)

// catalogFlags declares --dsn and --catalog-dsn for a command that works
// on the catalog database only; the catalog is --catalog-dsn when given,
// else --dsn (as for atrium migrate).
func catalogFlags(fs *flag.FlagSet) (dsn, catalogDSN *string) {
	dsn = fs.String("dsn", "", "PostgreSQL connection URL of the catalog database (required unless --catalog-dsn)")
	catalogDSN = fs.String("catalog-dsn", "", "catalog database when it is not the one --dsn names (default: --dsn)")
	return dsn, catalogDSN
}

// pickCatalog returns the catalog DSN, or a usage error when neither flag
// was given.
func pickCatalog(dsn, catalogDSN string) (string, error) {
	if catalogDSN != "" {
		return catalogDSN, nil
	}
	if dsn == "" {
		return "", usageError{"--dsn (or --catalog-dsn) is required"}
	}
	return dsn, nil
}

// connectCatalog opens one connection to the catalog database.
func connectCatalog(ctx context.Context, dsn string) (*pgx.Conn, error) {
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("connect to the catalog database: %w", err)
	}
	return c, nil
}

// openCatalogFlags connects to the catalog database that --dsn and
// --catalog-dsn name (see catalogFlags).
func openCatalogFlags(ctx context.Context, dsn, catalogDSN string) (*pgx.Conn, error) {
	target, err := pickCatalog(dsn, catalogDSN)
	if err != nil {
		return nil, err
	}
	return connectCatalog(ctx, target)
}

// noArguments refuses positional arguments a command does not take.
func noArguments(fs *flag.FlagSet) error {
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	return nil
}

// parseIDs reads the positional ids of promote, review, remove...
func parseIDs(args []string, what string) ([]int64, error) {
	if len(args) == 0 {
		return nil, usageError{fmt.Sprintf("give at least one %s id", what)}
	}
	ids := make([]int64, 0, len(args))
	seen := map[int64]bool{}
	for _, a := range args {
		id, err := strconv.ParseInt(a, 10, 64)
		if err != nil || id <= 0 {
			return nil, usageError{fmt.Sprintf("%q is not a %s id (a positive integer)", a, what)}
		}
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// missingIDs lists the ids of want not in got.
func missingIDs(want, got []int64) []string {
	have := map[int64]bool{}
	for _, id := range got {
		have[id] = true
	}
	var out []string
	for _, id := range want {
		if !have[id] {
			out = append(out, strconv.FormatInt(id, 10))
		}
	}
	return out
}

// serverDetail renders an error from a check or from the server with its
// SQLSTATE, detail and hint, for a person at a terminal.
func serverDetail(err error) string {
	var pe *proxy.Error
	var ue *proxy.UpstreamError
	var pg *pgconn.PgError
	var s, detail, hint string
	switch {
	case errors.As(err, &pe):
		s, detail, hint = fmt.Sprintf("%s (SQLSTATE %s)", pe.Message, pe.Code), pe.Detail, pe.Hint
	case errors.As(err, &ue):
		s, detail, hint = fmt.Sprintf("%s (SQLSTATE %s)", ue.Message, ue.Code), ue.Detail, ue.Hint
	case errors.As(err, &pg):
		s, detail, hint = fmt.Sprintf("%s (SQLSTATE %s)", pg.Message, pg.Code), pg.Detail, pg.Hint
	default:
		return err.Error()
	}
	if detail != "" {
		s += "; DETAIL: " + detail
	}
	if hint != "" {
		s += "; HINT: " + hint
	}
	return s
}

// sqlState is the SQLSTATE an error carries, from a check or the server.
func sqlState(err error) string {
	var pe *proxy.Error
	var ue *proxy.UpstreamError
	var pg *pgconn.PgError
	switch {
	case errors.As(err, &pe):
		return pe.Code
	case errors.As(err, &ue):
		return ue.Code
	case errors.As(err, &pg):
		return pg.Code
	}
	return ""
}

// catalogError wraps a failed catalog statement, pointing at atrium
// migrate when the learning tables are missing (a catalog older than
// migration 0020) and at grants when the role may not touch them.
func catalogError(what string, err error) error {
	switch sqlState(err) {
	case "42P01", "42883":
		return fmt.Errorf("%s: %s (is the catalog schema current? run `atrium migrate`): %w", what, serverDetail(err), err)
	case "42501":
		return fmt.Errorf("%s: %s (see docs/learning.md for the grants curators need): %w", what, serverDetail(err), err)
	}
	return fmt.Errorf("%s: %s: %w", what, serverDetail(err), err)
}

// printable makes catalog text (questions, terms: anyone may have written
// them) safe for a terminal: control characters, escape sequences included,
// become spaces, and the text is cut to max characters (0: no cut).
func printable(s string, max int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return ' '
		}
		return r
	}, s)
	if max > 0 && utf8.RuneCountInString(s) > max {
		i := 0
		for pos := range s {
			if i == max-1 {
				return s[:pos] + "…"
			}
			i++
		}
	}
	return s
}

// listing is what a curation command's list prints: the rows query reads
// from table (named in errors), scanned by scan, as a JSON array or as a
// tab-aligned table of header and one line per row.
type listing[T any] struct {
	table  string
	query  string
	args   []any
	scan   func(pgx.CollectableRow) (T, error)
	header string         // tab-separated column names
	line   func(T) string // tab-separated fields, printable() applied
}

// print runs the listing on conn and writes it to out; it returns the rows
// for a caller that adds a hint.
func (l listing[T]) print(ctx context.Context, conn *pgx.Conn, out io.Writer, asJSON bool) ([]T, error) {
	rows, err := conn.Query(ctx, l.query, l.args...)
	if err != nil {
		return nil, catalogError("read "+l.table, err)
	}
	list, err := pgx.CollectRows(rows, l.scan)
	if err != nil {
		return nil, catalogError("read "+l.table, err)
	}
	if asJSON {
		if list == nil {
			list = []T{} // [] rather than null
		}
		return list, writeJSON(out, list)
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, l.header)
	for _, r := range list {
		fmt.Fprintln(tw, l.line(r))
	}
	return list, tw.Flush()
}

// writeJSON writes v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// nestedUsage prints a command group's usage and returns what its
// dispatcher returns for no subcommand (a usage error) or for --help.
func nestedUsage(env *cliEnv, args []string, text, missing string) error {
	fmt.Fprint(env.stderr, text)
	if len(args) == 0 {
		return usageError{missing}
	}
	return flag.ErrHelp
}

// setUsage gives fs a --help that starts with a usage line and what the
// command does, then lists the flags.
func setUsage(env *cliEnv, fs *flag.FlagSet, usage, what string) {
	fs.Usage = func() {
		fmt.Fprintf(env.stderr, "Usage: %s\n\n%s\n\n", usage, what)
		fs.PrintDefaults()
	}
}

func isHelp(a string) bool { return a == "-h" || a == "--help" || a == "-help" || a == "help" }

// idChange is a curation command that changes rows by id (examples
// disable/enable/remove, glossary review/remove): all the ids or none, so
// a typo in one id changes nothing.
type idChange struct {
	command      string
	noun, plural string
	// queries maps a verb to its statement: ... WHERE id = ANY($1)
	// RETURNING id.
	queries map[string]string
	// past maps a verb to the word the summary line uses.
	past map[string]string
	// what maps a verb to the sentence --help gives after the usage line.
	what map[string]string
}

func (c idChange) run(ctx context.Context, env *cliEnv, verb string, args []string) error {
	fs := flag.NewFlagSet(c.command+" "+verb, flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	setUsage(env, fs, "atrium "+c.command+" "+verb+" --dsn DSN ID...",
		c.what[verb]+" All the ids or none: an id the catalog does not hold changes nothing.")
	dsn, catalogDSN := catalogFlags(fs)
	if _, err := parseFlags(ctx, env, fs, args); err != nil {
		return err
	}
	ids, err := parseIDs(fs.Args(), c.noun)
	if err != nil {
		return err
	}
	conn, err := openCatalogFlags(ctx, *dsn, *catalogDSN)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, c.queries[verb], ids)
		if err != nil {
			return catalogError(verb+" "+c.plural, err)
		}
		got, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return catalogError(verb+" "+c.plural, err)
		}
		if missing := missingIDs(ids, got); len(missing) > 0 {
			return fmt.Errorf("no %s with id %s; nothing changed", c.noun, strings.Join(missing, ", "))
		}
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "%s %d %s\n", c.past[verb], len(ids), c.plural)
	return nil
}
