package catalog

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"

	"github.com/atriumdb/atrium/internal/ident"
)

// writeTableSQL writes one relation in one statement: the table row, its
// columns and values (stale ones deleted, current ones upserted), the
// dirty mark of its schema and the version bump. One statement per table
// (plus BEGIN/COMMIT) keeps a pipelined chunk cheap for the server.
const writeTableSQL = `
WITH t AS (
    INSERT INTO atrium.tables (schema_name, table_name, kind, comment, purpose, est_rows, column_count,
        name_text, comment_text, value_text, document, embedding, fingerprint, llm_fingerprint,
        sampled_rows, sample_complete, skipped_reason, refreshed_at)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::vector, $13, $14, $15, $16, $17, now())
    ON CONFLICT (schema_name, table_name) DO UPDATE SET
        kind = EXCLUDED.kind, comment = EXCLUDED.comment, purpose = EXCLUDED.purpose,
        est_rows = EXCLUDED.est_rows, column_count = EXCLUDED.column_count,
        name_text = EXCLUDED.name_text, comment_text = EXCLUDED.comment_text,
        value_text = EXCLUDED.value_text, document = EXCLUDED.document, embedding = EXCLUDED.embedding,
        fingerprint = EXCLUDED.fingerprint, llm_fingerprint = EXCLUDED.llm_fingerprint,
        sampled_rows = EXCLUDED.sampled_rows, sample_complete = EXCLUDED.sample_complete,
        skipped_reason = EXCLUDED.skipped_reason, refreshed_at = now()
    RETURNING id
), dc AS (
    DELETE FROM atrium.columns c USING t WHERE c.table_id = t.id AND c.position <> ALL ($18::int[])
), ic AS (
    INSERT INTO atrium.columns (table_id, position, column_name, data_type, comment, description,
        is_primary_key, is_unique, not_null, null_frac, n_distinct, avg_width, sample_values, embedding)
    SELECT t.id, u.pos, u.name, u.typ, u.cmt, u.dsc, u.pk, u.uq, u.nn, u.nf, u.nd, u.aw,
           ARRAY(SELECT jsonb_array_elements_text($29::jsonb -> (u.ord::int - 1))), u.emb
      FROM t, unnest($18::int[], $19::text[], $20::text[], $21::text[], $22::text[], $23::bool[], $24::bool[],
                     $25::bool[], $26::real[], $27::real[], $28::int[], $30::vector[])
             WITH ORDINALITY AS u(pos, name, typ, cmt, dsc, pk, uq, nn, nf, nd, aw, emb, ord)
    ON CONFLICT (table_id, position) DO UPDATE SET
        column_name = EXCLUDED.column_name, data_type = EXCLUDED.data_type, comment = EXCLUDED.comment,
        description = EXCLUDED.description, is_primary_key = EXCLUDED.is_primary_key,
        is_unique = EXCLUDED.is_unique, not_null = EXCLUDED.not_null, null_frac = EXCLUDED.null_frac,
        n_distinct = EXCLUDED.n_distinct, avg_width = EXCLUDED.avg_width,
        sample_values = EXCLUDED.sample_values, embedding = EXCLUDED.embedding
), dv AS (
    DELETE FROM atrium.value_index v USING t
     WHERE v.table_id = t.id
       AND (v.column_name, v.value) NOT IN (SELECT * FROM unnest($31::text[], $32::text[]))
), iv AS (
    INSERT INTO atrium.value_index (table_id, column_name, value)
    SELECT t.id, u.c, u.v FROM t, unnest($31::text[], $32::text[]) AS u(c, v)
    ON CONFLICT DO NOTHING
), ds AS (
    INSERT INTO atrium.dirty_schemas (schema_name) VALUES ($1) ON CONFLICT DO NOTHING
)
UPDATE atrium.catalog_state SET version = version + 1, updated_at = now()`

// writeDocs writes each document in its own transaction, all pipelined in
// one round trip. A failure leaves every table either fully old or fully
// new; the sync then stops and the next one redoes what is missing.
func (s *syncer) writeDocs(ctx context.Context, docs []*tableDoc) error {
	b := &pgx.Batch{}
	for _, d := range docs {
		r := d.rel
		var skipped *string
		if d.skipped != "" {
			skipped = &d.skipped
		}
		n := len(r.Columns)
		pos := make([]int32, n)
		names := make([]string, n)
		types := make([]string, n)
		cmts := make([]*string, n)
		descs := make([]*string, n)
		pks := make([]bool, n)
		uqs := make([]bool, n)
		nns := make([]bool, n)
		nfs := make([]*float32, n)
		nds := make([]*float32, n)
		aws := make([]*int32, n)
		vals := make([][]string, n)
		var embs []pgvector.Vector
		if len(d.colEmb) == n {
			embs = make([]pgvector.Vector, n)
		}
		for i, c := range r.Columns {
			pos[i], names[i], types[i], cmts[i] = int32(c.Num), c.Name, c.Type, c.Comment
			if desc, ok := d.descriptions[c.Name]; ok && desc != "" {
				descs[i] = &desc
			}
			pks[i], uqs[i], nns[i] = c.PK, d.colUnique[i], c.NotNull
			nfs[i], nds[i], aws[i] = c.NullFrac, c.NDistinct, c.AvgWidth
			vals[i] = d.colValues[i]
			if vals[i] == nil {
				vals[i] = []string{}
			}
			if embs != nil {
				embs[i] = pgvector.NewVector(d.colEmb[i])
			}
		}
		vc, vv := d.indexedValues()
		if vc == nil {
			vc, vv = []string{}, []string{}
		}
		b.Queue("BEGIN")
		b.Queue(writeTableSQL, r.Schema, r.Name, r.Kind, r.Comment, d.purpose, d.estRows, len(r.Columns),
			d.nameText, d.commentText, d.valueText, d.document, nullVec(d.embedding), d.fingerprint, d.llmFP,
			d.sampledRows, d.sampleFull, skipped,
			pos, names, types, cmts, descs, pks, uqs, nns, nfs, nds, aws, vals, embs, vc, vv)
		b.Queue("COMMIT")
	}
	conn, release, err := s.acquire(ctx)
	if err != nil {
		return fmt.Errorf("catalog: write: acquire connection: %w", err)
	}
	defer release()
	err = conn.SendBatch(ctx, b).Close()
	if err != nil {
		// The failed table's transaction is still open (aborted) on this
		// connection; end it before the connection goes back to the pool.
		if _, rerr := conn.Exec(context.WithoutCancel(ctx), "ROLLBACK"); rerr != nil {
			conn.Conn().Close(context.WithoutCancel(ctx)) //nolint:errcheck
		}
		return fmt.Errorf("catalog: write tables %s … %s: %w", docs[0].rel.qualified(), docs[len(docs)-1].rel.qualified(), err)
	}
	for _, d := range docs {
		if d.skipped != "" {
			s.stats.Skipped++
		}
	}
	s.stats.Rebuilt += len(docs)
	return nil
}

func nullVec(v []float32) *pgvector.Vector {
	if len(v) == 0 {
		return nil
	}
	pv := pgvector.NewVector(v)
	return &pv
}

// columnEmbedText is the text a column's embedding is made from: the table
// and column names as words, then up to ten sampled values.
func columnEmbedText(table, col string, values []string) string {
	if len(values) > maxColumnEmbedVals {
		values = values[:maxColumnEmbedVals]
	}
	short := make([]string, len(values))
	for k, v := range values {
		short[k] = truncateRunes(v, 40)
	}
	return ident.Words(table) + " " + ident.Words(col) + ": " + strings.Join(short, ", ")
}

// reembed gives vectors to catalogued tables that lack them, which happens
// after the embedder changed (and after a sync that failed while
// embedding). It embeds the stored documents; nothing is re-sampled.
func (s *syncer) reembed(ctx context.Context) error {
	var total int
	if err := s.cat.QueryRow(ctx, `SELECT count(*) FROM atrium.tables WHERE embedding IS NULL AND skipped_reason IS NULL`).Scan(&total); err != nil {
		return fmt.Errorf("catalog: count tables to re-embed: %w", err)
	}
	if total == 0 {
		return nil
	}
	var last int64
	done := 0
	for {
		type item struct {
			id       int64
			doc      string
			colTexts []string
			pos      []int32
		}
		rows, err := s.cat.Query(ctx, `SELECT t.id, t.table_name, t.document,
			    coalesce(array_agg(c.position ORDER BY c.position) FILTER (WHERE c.position IS NOT NULL), '{}'),
			    coalesce(array_agg(c.column_name ORDER BY c.position) FILTER (WHERE c.position IS NOT NULL), '{}'),
			    coalesce(jsonb_agg(to_jsonb(c.sample_values) ORDER BY c.position) FILTER (WHERE c.position IS NOT NULL), '[]')
			  FROM atrium.tables t LEFT JOIN atrium.columns c ON c.table_id = t.id
			 WHERE t.embedding IS NULL AND t.skipped_reason IS NULL AND t.id > $1
			 GROUP BY t.id ORDER BY t.id LIMIT $2`, last, s.opts.ChunkSize)
		if err != nil {
			return fmt.Errorf("catalog: read tables to re-embed: %w", err)
		}
		var items []item
		var texts []string
		for rows.Next() {
			var it item
			var table string
			var cols []string
			var vals [][]string
			if err := rows.Scan(&it.id, &table, &it.doc, &it.pos, &cols, &vals); err != nil {
				rows.Close()
				return fmt.Errorf("catalog: read tables to re-embed: %w", err)
			}
			for i, c := range cols {
				it.colTexts = append(it.colTexts, columnEmbedText(table, c, vals[i]))
			}
			texts = append(texts, it.doc)
			texts = append(texts, it.colTexts...)
			items = append(items, it)
			last = it.id
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("catalog: read tables to re-embed: %w", err)
		}
		if len(items) == 0 {
			return nil
		}
		vecs, err := s.opts.Embedder.Embed(ctx, texts)
		if err != nil {
			return fmt.Errorf("catalog: re-embed with %s: %w", s.opts.Embedder.Name(), err)
		}
		if len(vecs) != len(texts) {
			return fmt.Errorf("catalog: embedder %s returned %d vectors for %d texts", s.opts.Embedder.Name(), len(vecs), len(texts))
		}
		b := &pgx.Batch{}
		b.Queue("BEGIN")
		k := 0
		for _, it := range items {
			b.Queue("UPDATE atrium.tables SET embedding = $2::vector WHERE id = $1", it.id, pgvector.NewVector(vecs[k]))
			k++
			embs := make([]pgvector.Vector, 0, len(it.colTexts))
			for range it.colTexts {
				embs = append(embs, pgvector.NewVector(vecs[k]))
				k++
			}
			if len(it.pos) > 0 {
				b.Queue(`UPDATE atrium.columns c SET embedding = u.emb
					FROM unnest($2::int[], $3::vector[]) AS u(pos, emb)
					WHERE c.table_id = $1 AND c.position = u.pos`, it.id, it.pos, embs)
			}
		}
		b.Queue("UPDATE atrium.catalog_state SET version = version + 1, updated_at = now()")
		b.Queue("COMMIT")
		if err := s.runTxBatch(ctx, b); err != nil {
			return fmt.Errorf("catalog: write re-embedded vectors: %w", err)
		}
		done += len(items)
		s.stats.Reembedded += len(items)
		s.progress("re-embed", done, total)
	}
}

// runTxBatch sends a batch that holds its own BEGIN/COMMIT and rolls the
// connection back if it fails.
func (s *syncer) runTxBatch(ctx context.Context, b *pgx.Batch) error {
	conn, release, err := s.acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	if err := conn.SendBatch(ctx, b).Close(); err != nil {
		if _, rerr := conn.Exec(context.WithoutCancel(ctx), "ROLLBACK"); rerr != nil {
			conn.Conn().Close(context.WithoutCancel(ctx)) //nolint:errcheck
		}
		return err
	}
	return nil
}
