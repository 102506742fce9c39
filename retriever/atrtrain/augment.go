package atrtrain

// Schema-side augmentation (train-atr --augment-schemas). Spider's training
// questions mostly repeat their schema's words ("How many singers…" over
// `singer`), so a scorer trained on them learns that the table whose name
// the question repeats is the answer, and falls apart on schemas named in
// other words (Spider-Syn, real databases with abbreviated names). Each
// training database gets one renamed copy, loaded beside it into the
// training catalog: words of its table and column names replaced by a
// synonym a person would use (the reverse of the question-word → schema-word
// pairs learned from Spider-Syn train, WordNet first-sense synonyms) or by an
// identifier abbreviation (the reverse of abbrev.tsv), some identifiers
// written without separators (PostgreSQL folds unquoted camelCase to
// `productname`). A share of the training questions is then asked against
// the renamed copy, and the other databases of its pool are drawn renamed
// with the same share, so the scorer sees the question's words missing from
// the gold table's name as often as present. Held-out (validation)
// questions are never augmented: the operating point is chosen on schemas
// as they are. Spider's training schemas have no comments, so there are
// none to drop. Measured in docs/retrieval.md (issue 10, step 6): no better
// than plain training over three seeds, so the shipped weights do not use it.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/atriumdb/atrium/catalog/benchload"
	"github.com/atriumdb/atrium/internal/ident"
	"github.com/atriumdb/atrium/retriever/vocab"
)

// augmentSuffix names a renamed copy's db_id (and schema).
const augmentSuffix = "_aug"

// schemaVariant is a training database with its names rewritten.
type schemaVariant struct {
	db      benchload.Database
	schema  string
	tables  map[string]string            // original table (lower) → renamed (lower)
	columns map[string]map[string]string // original table → original column → renamed (lower)
}

// mapTable maps "schema.table" of the original database to the copy's.
func (v *schemaVariant) mapTable(qualified string) string {
	_, t, _ := strings.Cut(qualified, ".")
	if nt, ok := v.tables[t]; ok {
		return v.schema + "." + nt
	}
	return v.schema + "." + t
}

func (v *schemaVariant) mapColumn(qualified, column string) string {
	_, t, _ := strings.Cut(qualified, ".")
	if nc, ok := v.columns[t][column]; ok {
		return nc
	}
	return column
}

// renamer rewrites identifiers word by word.
type renamer struct {
	lex *vocab.Lexicon
	syn map[string][]string // schema word → words people use for it
	abb map[string][]string // word → its identifier abbreviations
	// RenameWord is the chance that a word is replaced; Concat the chance
	// that an identifier is written without separators.
	renameWord, concat float64
	// abbrevOnly replaces words by abbreviations only, never synonyms.
	abbrevOnly bool
}

func newRenamer(lex *vocab.Lexicon, o RenameOptions) *renamer {
	rn := &renamer{lex: lex, syn: map[string][]string{}, abb: map[string][]string{},
		renameWord: o.RenameWord, concat: o.Concat, abbrevOnly: o.AbbreviationsOnly}
	src := vocab.EmbeddedSources()
	// learned.tsv: question word, schema word it replaced, times, total.
	readTSV(src.Learned, func(f []string) {
		if len(f) >= 3 && isWord(f[0]) && f[0] != f[1] {
			if n, err := strconv.Atoi(f[2]); err == nil && n >= 2 {
				rn.syn[f[1]] = append(rn.syn[f[1]], f[0])
			}
		}
	})
	// abbrev.tsv: abbreviation, word, weight.
	readTSV(src.Abbrev, func(f []string) {
		if len(f) >= 2 && isWord(f[0]) && f[0] != f[1] {
			rn.abb[f[1]] = append(rn.abb[f[1]], f[0])
		}
	})
	return rn
}

func readTSV(r io.Reader, fn func([]string)) {
	if r == nil {
		return
	}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fn(strings.Split(line, "\t"))
	}
}

func isWord(s string) bool {
	if len(s) < 2 {
		return false
	}
	for _, r := range s {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return true
}

// synonyms are the words a renamed schema may use for w: Spider-Syn's
// substitutions first, WordNet's first-sense synonyms (weight ≥ 0.6) when
// there are none.
func (rn *renamer) synonyms(w string) []string {
	if s := rn.syn[w]; len(s) > 0 {
		return s
	}
	var out []string
	for _, e := range rn.lex.Expand(w) {
		if e.Kind == vocab.KindSynonym && e.Weight >= 0.6 && isWord(e.Term) && len(e.Term) >= 3 {
			out = append(out, e.Term)
		}
	}
	return out
}

// rename rewrites one identifier.
func (rn *renamer) rename(name string, rng *rand.Rand) string {
	words := ident.Split(name)
	for i, w := range words {
		if len(w) < 3 || w == "id" || rng.Float64() >= rn.renameWord {
			continue
		}
		var syn []string
		if !rn.abbrevOnly {
			syn = rn.synonyms(w)
		}
		abb := rn.abb[w]
		switch {
		case len(syn) > 0 && (len(abb) == 0 || rng.IntN(2) == 0):
			words[i] = syn[rng.IntN(len(syn))]
		case len(abb) > 0:
			words[i] = abb[rng.IntN(len(abb))]
		}
	}
	sep := "_"
	if len(words) > 1 && rng.Float64() < rn.concat {
		sep = ""
	}
	out := strings.Join(words, sep)
	if out == "" || len(out) > 63 {
		return strings.ToLower(name)
	}
	return out
}

// variant renames db's tables and columns; a renamed name that collides
// with another of the same scope keeps its original.
func (rn *renamer) variant(db *benchload.Database, rng *rand.Rand) *schemaVariant {
	v := &schemaVariant{db: *db, tables: map[string]string{}, columns: map[string]map[string]string{}}
	v.db.DBID = db.DBID + augmentSuffix
	v.schema = benchload.SchemaName(v.db.DBID)
	v.db.TableNames = make([]string, len(db.TableNames))
	v.db.TableNamesNorm = make([]string, len(db.TableNames))
	used := map[string]bool{}
	for _, t := range db.TableNames {
		used[strings.ToLower(t)] = true
	}
	for i, t := range db.TableNames {
		orig := strings.ToLower(t)
		nt := rn.rename(t, rng)
		if nt != orig && used[nt] {
			nt = orig
		}
		used[nt] = true
		v.db.TableNames[i], v.db.TableNamesNorm[i] = nt, ident.Words(nt)
		v.tables[orig] = nt
		v.columns[orig] = map[string]string{}
	}
	v.db.ColumnNames = make([][2]any, len(db.ColumnNames))
	seen := map[int]map[string]bool{}
	for i, cn := range db.ColumnNames {
		v.db.ColumnNames[i] = cn
		ti, name, ok := db.Column(i)
		if !ok || ti >= len(db.TableNames) {
			continue
		}
		orig := strings.ToLower(name)
		tab := strings.ToLower(db.TableNames[ti])
		if nc, done := v.columns[tab][orig]; done {
			v.db.ColumnNames[i] = [2]any{float64(ti), nc}
			continue
		}
		if seen[ti] == nil {
			seen[ti] = map[string]bool{}
			for j := range db.ColumnNames {
				if tj, n, ok := db.Column(j); ok && tj == ti {
					seen[ti][strings.ToLower(n)] = true
				}
			}
		}
		nc := rn.rename(name, rng)
		if nc != orig && seen[ti][nc] {
			nc = orig
		}
		seen[ti][nc] = true
		v.columns[tab][orig] = nc
		v.db.ColumnNames[i] = [2]any{float64(ti), nc}
	}
	return v
}

// buildVariants renames every database of ids with rn (deterministic for
// a seed).
func buildVariants(bench *benchload.Bench, ids []string, seed uint64, rn *renamer) map[string]*schemaVariant {
	sorted := append([]string(nil), ids...)
	sort.Strings(sorted)
	rng := rand.New(rand.NewPCG(seed, 0xa11a5))
	out := map[string]*schemaVariant{}
	for _, id := range sorted {
		db := bench.DBs[strings.ToLower(id)]
		if db == nil {
			continue
		}
		out[db.Schema()] = rn.variant(db, rng)
	}
	return out
}

// loadVariants renames the databases of ids and loads the copies into the
// training database behind pool (through a tables.json of their own, so
// benchload builds their DDL as it does the originals').
func loadVariants(ctx context.Context, pool *pgxpool.Pool, bench *benchload.Bench, ids []string, seed uint64, log *slog.Logger) (map[string]*schemaVariant, error) {
	variants := buildVariants(bench, ids, seed, newRenamer(vocab.Default(), DefaultRenameOptions(seed)))
	dir, err := os.MkdirTemp("", "atrium-train-aug-")
	if err != nil {
		return nil, fmt.Errorf("augment schemas: %w", err)
	}
	defer os.RemoveAll(dir)
	keys := make([]string, 0, len(variants))
	for k := range variants {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	dbs := make([]benchload.Database, 0, len(keys))
	copyIDs := make([]string, 0, len(keys))
	for _, k := range keys {
		dbs = append(dbs, variants[k].db)
		copyIDs = append(copyIDs, variants[k].db.DBID)
	}
	raw, err := json.Marshal(dbs)
	if err != nil {
		return nil, fmt.Errorf("augment schemas: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tables.json"), raw, 0o600); err != nil {
		return nil, fmt.Errorf("augment schemas: %w", err)
	}
	log.Info("train-atr: creating renamed copies of the training schemas", "databases", len(copyIDs))
	if _, err := benchload.Load(ctx, pool, dir, benchload.Options{DBIDs: copyIDs, Logger: log}); err != nil {
		return nil, fmt.Errorf("load renamed training schemas: %w", err)
	}
	return variants, nil
}

// RenameOptions are RenameBench's renamer settings.
type RenameOptions struct {
	Seed uint64
	// RenameWord is the chance that an identifier word is replaced by a
	// synonym or an abbreviation, Concat the chance that an identifier's
	// words are run together (customer_name → customername, what
	// PostgreSQL keeps of an unquoted customerName).
	RenameWord, Concat float64
	// AbbreviationsOnly replaces words by their identifier abbreviations
	// (abbrev.tsv) only, never by synonyms.
	AbbreviationsOnly bool
}

// DefaultRenameOptions are the settings of --augment-schemas.
func DefaultRenameOptions(seed uint64) RenameOptions {
	return RenameOptions{Seed: seed, RenameWord: 0.5, Concat: 0.15}
}

// RenameBench renames every database of bench with the renamer of
// --augment-schemas, at o's settings (deterministic for a seed): a schema
// worded unlike the one its questions were written against, for measuring
// how a scorer holds up on names it was not shaped on. It returns the
// renamed copies (db_id with the "_aug" suffix) and a map from each
// original "schema.table" to the copy's.
func RenameBench(bench *benchload.Bench, o RenameOptions) ([]benchload.Database, map[string]string) {
	ids := make([]string, 0, len(bench.DBs))
	for id := range bench.DBs {
		ids = append(ids, id)
	}
	variants := buildVariants(bench, ids, o.Seed, newRenamer(vocab.Default(), o))
	keys := make([]string, 0, len(variants))
	for k := range variants {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	dbs := make([]benchload.Database, 0, len(keys))
	tables := map[string]string{}
	for _, k := range keys {
		v := variants[k]
		dbs = append(dbs, v.db)
		for orig := range v.tables {
			tables[k+"."+orig] = v.mapTable(k + "." + orig)
		}
	}
	return dbs, tables
}
