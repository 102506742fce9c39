package catalog

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// sample is what a bounded read of one relation returned.
type sample struct {
	cols    []int       // indexes into relation.Columns that were read
	rows    [][]*string // values as text, truncated; nil = SQL NULL
	full    bool        // fewer rows than asked: the whole relation was read
	skipped string      // non-empty: the relation could not be read, and why
	err     error       // a read failure that is not a permission problem
}

// sampleLimits bound the cost of reading a relation.
type sampleLimits struct {
	rows      int // rows read per relation
	columns   int // columns read per relation
	valueLen  int // characters kept per value
	timeoutMS int // statement_timeout per read
}

// unsampledType: values that say nothing to a reader and can be huge.
func unsampledType(t string) bool {
	return t == "bytea" || strings.HasPrefix(t, "tsvector") || t == "oid" || strings.HasPrefix(t, "vector") ||
		strings.HasPrefix(t, "halfvec") || strings.HasPrefix(t, "sparsevec")
}

// sampleQuery reads at most lim.rows rows of r without a full scan of a large
// table: TABLESAMPLE SYSTEM picks whole pages at random when the planner
// thinks the table is much larger than the sample. REPEATABLE (0) fixes the
// seed, so syncing unchanged data samples the same pages: the catalog (and
// what retrieval and its evaluation make of it) does not change between
// two syncs of the same table.
func sampleQuery(r *relation, lim sampleLimits) (string, []int) {
	var cols []int
	var sb strings.Builder
	sb.WriteString("SELECT ")
	for i, c := range r.Columns {
		if len(cols) >= lim.columns {
			break
		}
		if unsampledType(c.Type) {
			continue
		}
		if len(cols) > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "left(%s::text, %d)", pgx.Identifier{c.Name}.Sanitize(), lim.valueLen)
		cols = append(cols, i)
	}
	if len(cols) == 0 {
		return "", nil
	}
	sb.WriteString(" FROM ")
	sb.WriteString(r.qualified())
	if (r.Kind == "table" || r.Kind == "materialized_view") && r.RelTuples > float64(lim.rows)*20 {
		pct := 100 * float64(lim.rows) * 20 / r.RelTuples
		pct = max(pct, 0.0001)
		sb.WriteString(" TABLESAMPLE SYSTEM (")
		sb.WriteString(strconv.FormatFloat(pct, 'f', 6, 64))
		sb.WriteString(") REPEATABLE (0)")
	}
	sb.WriteString(" LIMIT ")
	sb.WriteString(strconv.Itoa(lim.rows))
	return sb.String(), cols
}

// sampleAll reads every relation in rels with one pipelined batch,
// falling back to one query at a time when a read fails (a failed statement
// aborts the rest of a pipeline). Stats from pg_stats come along.
func sampleAll(ctx context.Context, src *pgxpool.Pool, rels []*relation, lim sampleLimits) ([]sample, error) {
	out := make([]sample, len(rels))
	conn, err := src.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("catalog: sample: acquire connection: %w", err)
	}
	defer conn.Release()
	// JIT off: compiling a sample query costs more than running it.
	if _, err := conn.Exec(ctx, "SET statement_timeout = "+strconv.Itoa(lim.timeoutMS)+"; SET jit = off"); err != nil {
		return nil, fmt.Errorf("catalog: sample: set statement_timeout: %w", err)
	}
	defer func() {
		if _, err := conn.Exec(context.WithoutCancel(ctx), "RESET statement_timeout; RESET jit"); err != nil {
			conn.Conn().Close(context.WithoutCancel(ctx)) //nolint:errcheck // the pool drops a closed conn
		}
	}()

	queries := make([]string, len(rels))
	b := &pgx.Batch{}
	for i, r := range rels {
		if !r.CanSelect {
			out[i].skipped = "permission denied: the sync role has no SELECT privilege on " + r.qualified()
		} else {
			queries[i], out[i].cols = sampleQuery(r, lim)
		}
		b.Queue(`SELECT attname::text, null_frac, n_distinct, avg_width, coalesce(most_common_vals::text::text[], '{}') || coalesce(histogram_bounds::text::text[], '{}') FROM pg_stats
			WHERE schemaname = $1 AND tablename = $2 AND NOT inherited`, r.Schema, r.Name)
		if queries[i] != "" {
			b.Queue(queries[i])
		}
	}
	br := conn.SendBatch(ctx, b)
	batchErr := func() error {
		for i, r := range rels {
			if err := readStats(br, r); err != nil {
				return err
			}
			if queries[i] == "" {
				continue
			}
			rows, err := br.Query()
			if err != nil {
				return err
			}
			if err := readSample(rows, &out[i], lim); err != nil {
				return err
			}
		}
		return nil
	}()
	closeErr := br.Close()
	if batchErr == nil && closeErr == nil {
		return out, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	// Something in the pipeline failed; redo relation by relation so one
	// unreadable view does not cost the others their samples.
	for i, r := range rels {
		if queries[i] == "" {
			continue
		}
		out[i].rows, out[i].full, out[i].err = nil, false, nil
		rows, err := conn.Query(ctx, queries[i])
		if err == nil {
			err = readSample(rows, &out[i], lim)
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			var pe *pgconn.PgError
			if errors.As(err, &pe) && (pe.Code == "42501" || pe.Code == "42P01") {
				out[i].skipped = pe.Message
			} else {
				out[i].err = err
			}
			out[i].rows = nil
			continue
		}
		if err := readStatsSingle(ctx, conn.Conn(), r); err != nil && ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	return out, nil
}

func readSample(rows pgx.Rows, s *sample, lim sampleLimits) error {
	defer rows.Close()
	n := 0
	for rows.Next() {
		vals := make([]*string, len(s.cols))
		ptrs := make([]any, len(s.cols))
		for j := range vals {
			ptrs[j] = &vals[j]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		s.rows = append(s.rows, vals)
		n++
	}
	if err := rows.Err(); err != nil {
		return err
	}
	s.full = n < lim.rows
	return nil
}

func readStats(br pgx.BatchResults, r *relation) error {
	rows, err := br.Query()
	if err != nil {
		return err
	}
	return scanStats(rows, r)
}

func readStatsSingle(ctx context.Context, conn *pgx.Conn, r *relation) error {
	rows, err := conn.Query(ctx, `SELECT attname::text, null_frac, n_distinct, avg_width, coalesce(most_common_vals::text::text[], '{}') || coalesce(histogram_bounds::text::text[], '{}') FROM pg_stats
		WHERE schemaname = $1 AND tablename = $2 AND NOT inherited`, r.Schema, r.Name)
	if err != nil {
		return err
	}
	return scanStats(rows, r)
}

func scanStats(rows pgx.Rows, r *relation) error {
	defer rows.Close()
	for rows.Next() {
		var name string
		var nf, nd *float32
		var aw *int32
		var mcv []string
		if err := rows.Scan(&name, &nf, &nd, &aw, &mcv); err != nil {
			return err
		}
		for i := range r.Columns {
			if r.Columns[i].Name == name {
				c := &r.Columns[i]
				c.NullFrac, c.NDistinct, c.AvgWidth = nf, nd, aw
				if !unsampledType(c.Type) {
					c.MCV = mcv
				}
			}
		}
	}
	return rows.Err()
}
