-- Atrium catalog, version 1. Applied by `atrium migrate` inside one
-- transaction under an advisory lock; see migrations/migrations.go.
CREATE EXTENSION IF NOT EXISTS vector;
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE SCHEMA IF NOT EXISTS atrium;
COMMENT ON SCHEMA atrium IS 'Atrium catalog: what Atrium knows about the tables it can answer questions from.';

-- Singleton row: the catalog version (bumped by every committed change) and
-- the embedder the stored vectors came from.
CREATE TABLE atrium.catalog_state (
    id          boolean PRIMARY KEY DEFAULT true CHECK (id),
    version     bigint      NOT NULL DEFAULT 0,
    embedder    text        NOT NULL DEFAULT '',
    dimension   integer     NOT NULL DEFAULT 0,
    updated_at  timestamptz NOT NULL DEFAULT now(),
    last_sync_started  timestamptz,
    last_sync_finished timestamptz,
    last_sync_stats    jsonb NOT NULL DEFAULT '{}'
);
INSERT INTO atrium.catalog_state DEFAULT VALUES;
COMMENT ON TABLE atrium.catalog_state IS 'One row: the catalog version and the embedder its vectors come from.';
COMMENT ON COLUMN atrium.catalog_state.id IS 'Always true; makes the table hold exactly one row.';
COMMENT ON COLUMN atrium.catalog_state.version IS 'Incremented in every transaction that changes the catalog; caches keyed on it are invalidated by any change.';
COMMENT ON COLUMN atrium.catalog_state.embedder IS 'Name of the embedder that produced every stored vector (e.g. builtin-v1); questions must be embedded with the same one.';
COMMENT ON COLUMN atrium.catalog_state.dimension IS 'Dimension of every stored vector; the embedding columns are typed vector(dimension).';
COMMENT ON COLUMN atrium.catalog_state.updated_at IS 'When version last changed.';
COMMENT ON COLUMN atrium.catalog_state.last_sync_started IS 'When the most recent catalog sync started.';
COMMENT ON COLUMN atrium.catalog_state.last_sync_finished IS 'When the most recent catalog sync finished successfully.';
COMMENT ON COLUMN atrium.catalog_state.last_sync_stats IS 'Counters of the most recent successful sync (tables seen, rebuilt, skipped, removed, edges).';

CREATE TABLE atrium.tables (
    id            bigserial PRIMARY KEY,
    schema_name   text   NOT NULL,
    table_name    text   NOT NULL,
    kind          text   NOT NULL CHECK (kind IN ('table','view','materialized_view','foreign_table','partitioned_table')),
    comment       text,
    purpose       text,
    est_rows      bigint NOT NULL DEFAULT 0,
    column_count  integer NOT NULL DEFAULT 0,
    -- The parts the full-text vector is built from, each with its own weight.
    name_text     text   NOT NULL DEFAULT '',
    comment_text  text   NOT NULL DEFAULT '',
    value_text    text   NOT NULL DEFAULT '',
    document      text   NOT NULL DEFAULT '',
    tsv           tsvector GENERATED ALWAYS AS (
                      setweight(to_tsvector('english', name_text), 'A') ||
                      setweight(to_tsvector('english', comment_text), 'B') ||
                      setweight(to_tsvector('english', value_text), 'C')) STORED,
    -- Typed vector(<dimension>) by the sync, which alters it when the
    -- embedder's dimension changes.
    embedding     vector,
    fingerprint   text   NOT NULL DEFAULT '',
    llm_fingerprint text NOT NULL DEFAULT '',
    sampled_rows  integer NOT NULL DEFAULT 0,
    sample_complete boolean NOT NULL DEFAULT false,
    skipped_reason text,
    refreshed_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (schema_name, table_name)
);
CREATE INDEX tables_tsv_idx ON atrium.tables USING gin (tsv);
CREATE INDEX tables_name_trgm_idx ON atrium.tables USING gin (table_name gin_trgm_ops);
COMMENT ON TABLE atrium.tables IS 'One row per catalogued relation (table, view, materialized view, foreign table) with its retrieval document and embedding.';
COMMENT ON COLUMN atrium.tables.id IS 'Catalog identifier of the relation; stable while the relation keeps its schema and name.';
COMMENT ON COLUMN atrium.tables.schema_name IS 'Schema of the relation, exactly as PostgreSQL spells it.';
COMMENT ON COLUMN atrium.tables.table_name IS 'Name of the relation, exactly as PostgreSQL spells it (quote it with quote_ident).';
COMMENT ON COLUMN atrium.tables.kind IS 'table, view, materialized_view, foreign_table or partitioned_table.';
COMMENT ON COLUMN atrium.tables.comment IS 'COMMENT ON the relation, from pg_description.';
COMMENT ON COLUMN atrium.tables.purpose IS 'What the table is for, written by the configured LLM (CORE-T purpose metadata); NULL without an LLM.';
COMMENT ON COLUMN atrium.tables.est_rows IS 'Planner row estimate (pg_class.reltuples) when the table was last refreshed.';
COMMENT ON COLUMN atrium.tables.column_count IS 'Number of columns the relation has.';
COMMENT ON COLUMN atrium.tables.name_text IS 'Schema, table and column names split into words (snake_case, camelCase and digits separated); weight A of tsv.';
COMMENT ON COLUMN atrium.tables.comment_text IS 'Table and column comments, LLM column descriptions and purpose; weight B of tsv.';
COMMENT ON COLUMN atrium.tables.value_text IS 'Distinct sampled values; weight C of tsv.';
COMMENT ON COLUMN atrium.tables.document IS 'The text that was embedded: schema summary, row summaries (column: value | ...) and purpose, bounded in size.';
COMMENT ON COLUMN atrium.tables.tsv IS 'Weighted full-text vector generated from name_text (A), comment_text (B) and value_text (C).';
COMMENT ON COLUMN atrium.tables.embedding IS 'Embedding of document by the embedder named in catalog_state; NULL for skipped tables.';
COMMENT ON COLUMN atrium.tables.fingerprint IS 'Hash of columns, types, comments, keys and row-estimate bucket; sync rebuilds the row only when it changes.';
COMMENT ON COLUMN atrium.tables.llm_fingerprint IS 'fingerprint the LLM descriptions and purpose were generated for; empty when they are missing or stale.';
COMMENT ON COLUMN atrium.tables.sampled_rows IS 'Rows read (TABLESAMPLE / LIMIT) to build the document and sample values.';
COMMENT ON COLUMN atrium.tables.sample_complete IS 'The sample read the whole relation, so sampled values are all its values.';
COMMENT ON COLUMN atrium.tables.skipped_reason IS 'Why the relation could not be read (e.g. no SELECT privilege); NULL when catalogued normally.';
COMMENT ON COLUMN atrium.tables.refreshed_at IS 'When this row was last rebuilt.';

CREATE TABLE atrium.columns (
    table_id      bigint  NOT NULL REFERENCES atrium.tables(id) ON DELETE CASCADE,
    position      integer NOT NULL,
    column_name   text    NOT NULL,
    data_type     text    NOT NULL,
    comment       text,
    description   text,
    is_primary_key boolean NOT NULL DEFAULT false,
    is_unique     boolean NOT NULL DEFAULT false,
    not_null      boolean NOT NULL DEFAULT false,
    null_frac     real,
    n_distinct    real,
    avg_width     integer,
    sample_values text[]  NOT NULL DEFAULT '{}',
    embedding     vector,
    PRIMARY KEY (table_id, position)
);
COMMENT ON TABLE atrium.columns IS 'One row per column of a catalogued relation.';
COMMENT ON COLUMN atrium.columns.table_id IS 'The relation (atrium.tables.id).';
COMMENT ON COLUMN atrium.columns.position IS 'Column number (pg_attribute.attnum).';
COMMENT ON COLUMN atrium.columns.column_name IS 'Column name exactly as PostgreSQL spells it.';
COMMENT ON COLUMN atrium.columns.data_type IS 'Type as format_type() prints it.';
COMMENT ON COLUMN atrium.columns.comment IS 'COMMENT ON the column, from pg_description.';
COMMENT ON COLUMN atrium.columns.description IS 'Column description narrated by the configured LLM (PNEUMA); NULL without an LLM.';
COMMENT ON COLUMN atrium.columns.is_primary_key IS 'Part of the primary key.';
COMMENT ON COLUMN atrium.columns.is_unique IS 'Values are unique: single-column primary key or unique constraint/index, or pg_stats reports every value distinct.';
COMMENT ON COLUMN atrium.columns.not_null IS 'Declared NOT NULL.';
COMMENT ON COLUMN atrium.columns.null_frac IS 'Fraction of NULLs, from pg_stats (NULL before ANALYZE).';
COMMENT ON COLUMN atrium.columns.n_distinct IS 'Distinct values from pg_stats: positive = count, negative = fraction of rows.';
COMMENT ON COLUMN atrium.columns.avg_width IS 'Average width in bytes, from pg_stats.';
COMMENT ON COLUMN atrium.columns.sample_values IS 'Distinct non-NULL values from a bounded sample of rows, as text, truncated.';
COMMENT ON COLUMN atrium.columns.embedding IS 'Embedding of "table column: sampled values", used to score inferred joins.';

CREATE TABLE atrium.join_edges (
    id            bigserial PRIMARY KEY,
    from_table_id bigint NOT NULL REFERENCES atrium.tables(id) ON DELETE CASCADE,
    from_columns  text[] NOT NULL,
    to_table_id   bigint NOT NULL REFERENCES atrium.tables(id) ON DELETE CASCADE,
    to_columns    text[] NOT NULL,
    source        text   NOT NULL CHECK (source IN ('foreign_key','inferred')),
    score         real   NOT NULL,
    evidence      jsonb  NOT NULL DEFAULT '{}',
    UNIQUE (from_table_id, from_columns, to_table_id, to_columns)
);
CREATE INDEX join_edges_to_idx ON atrium.join_edges (to_table_id);
COMMENT ON TABLE atrium.join_edges IS 'How relations join: declared foreign keys and inferred key/foreign-key pairs (CORE-T compatibility).';
COMMENT ON COLUMN atrium.join_edges.id IS 'Edge identifier.';
COMMENT ON COLUMN atrium.join_edges.from_table_id IS 'Referencing side (the foreign key, or the column whose values are a subset).';
COMMENT ON COLUMN atrium.join_edges.from_columns IS 'Columns of the referencing side, in key order.';
COMMENT ON COLUMN atrium.join_edges.to_table_id IS 'Referenced side (the unique key).';
COMMENT ON COLUMN atrium.join_edges.to_columns IS 'Columns of the referenced side, in key order.';
COMMENT ON COLUMN atrium.join_edges.source IS 'foreign_key (declared) or inferred (from names and sampled values).';
COMMENT ON COLUMN atrium.join_edges.score IS 'Compatibility in [0,1]: 1 for declared keys; 0.5*Jaccard + 0.5*name similarity for inferred ones.';
COMMENT ON COLUMN atrium.join_edges.evidence IS 'Why the edge exists: constraint name, or the Jaccard, exact and semantic name scores and sample sizes.';

CREATE TABLE atrium.value_index (
    table_id    bigint NOT NULL REFERENCES atrium.tables(id) ON DELETE CASCADE,
    column_name text   NOT NULL,
    value       text   NOT NULL,
    tsv         tsvector GENERATED ALWAYS AS (to_tsvector('simple', value)) STORED,
    PRIMARY KEY (table_id, column_name, value)
);
CREATE INDEX value_index_tsv_idx ON atrium.value_index USING gin (tsv);
CREATE INDEX value_index_trgm_idx ON atrium.value_index USING gin (value gin_trgm_ops);
COMMENT ON TABLE atrium.value_index IS 'Distinct sampled text values per column, so a question naming a value finds the table that holds it.';
COMMENT ON COLUMN atrium.value_index.table_id IS 'The relation (atrium.tables.id).';
COMMENT ON COLUMN atrium.value_index.column_name IS 'The column the value was sampled from.';
COMMENT ON COLUMN atrium.value_index.value IS 'A sampled value, as text, truncated to 200 characters.';
COMMENT ON COLUMN atrium.value_index.tsv IS 'Full-text vector of value (simple configuration, no stemming).';

-- Schemas whose join edges must be recomputed. Written in the same
-- transaction as a table change and cleared with the edges, so a sync that
-- dies between the two leaves the work for the next one.
CREATE TABLE atrium.dirty_schemas (
    schema_name text PRIMARY KEY,
    marked_at   timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE atrium.dirty_schemas IS 'Schemas whose join edges are stale; the sync recomputes and removes them.';
COMMENT ON COLUMN atrium.dirty_schemas.schema_name IS 'Schema whose tables changed since its join edges were computed.';
COMMENT ON COLUMN atrium.dirty_schemas.marked_at IS 'When the first unprocessed change was written.';

CREATE VIEW atrium.table_overview AS
SELECT t.id,
       t.schema_name,
       t.table_name,
       t.kind,
       t.est_rows,
       t.column_count,
       (SELECT string_agg(c.column_name || ' ' || c.data_type ||
                          CASE WHEN c.is_primary_key THEN ' PK' ELSE '' END,
                          ', ' ORDER BY c.position)
          FROM atrium.columns c WHERE c.table_id = t.id) AS columns,
       (SELECT string_agg(format('%s -> %I.%I(%s) [%s %s]',
                                 array_to_string(e.from_columns, ','), o.schema_name, o.table_name,
                                 array_to_string(e.to_columns, ','), e.source, round(e.score::numeric, 2)),
                          '; ' ORDER BY e.score DESC)
          FROM atrium.join_edges e JOIN atrium.tables o ON o.id = e.to_table_id
         WHERE e.from_table_id = t.id) AS joins_to,
       (SELECT string_agg(format('%I.%I(%s)', o.schema_name, o.table_name, array_to_string(e.from_columns, ',')),
                          '; ' ORDER BY e.score DESC)
          FROM atrium.join_edges e JOIN atrium.tables o ON o.id = e.from_table_id
         WHERE e.to_table_id = t.id) AS referenced_by,
       coalesce(t.comment, t.purpose) AS description,
       t.skipped_reason,
       t.refreshed_at
  FROM atrium.tables t;
COMMENT ON VIEW atrium.table_overview IS 'One row per catalogued relation: its columns, joins in both directions, row estimate and last refresh.';

CREATE VIEW atrium.join_graph AS
SELECT e.id,
       f.schema_name AS from_schema, f.table_name AS from_table, e.from_columns,
       t.schema_name AS to_schema, t.table_name AS to_table, e.to_columns,
       e.source, e.score, e.evidence
  FROM atrium.join_edges e
  JOIN atrium.tables f ON f.id = e.from_table_id
  JOIN atrium.tables t ON t.id = e.to_table_id;
COMMENT ON VIEW atrium.join_graph IS 'Join edges with schema and table names instead of ids.';

CREATE VIEW atrium.skipped_tables AS
SELECT schema_name, table_name, kind, skipped_reason, refreshed_at
  FROM atrium.tables WHERE skipped_reason IS NOT NULL;
COMMENT ON VIEW atrium.skipped_tables IS 'Relations the sync could not read, with the reason.';
