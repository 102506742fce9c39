-- Atrium query log: one row per natural-language question or RETRIEVE
-- statement, written asynchronously by internal/querylog in batches (a slow
-- catalog database drops log rows, it never slows queries) and trimmed by
-- `atrium serve --query-log-retention`. DBAs query it like any table.
CREATE SCHEMA IF NOT EXISTS atrium;

CREATE TABLE atrium.query_log (
    id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    logged_at         timestamptz NOT NULL DEFAULT now(),
    request_id        text        NOT NULL,
    instance          text        NOT NULL DEFAULT '',
    database_name     text        NOT NULL,
    role_name         text        NOT NULL,
    application_name  text        NOT NULL DEFAULT '',
    kind              text        NOT NULL CHECK (kind IN ('nl', 'nl_sql', 'retrieve')),
    question          text        NOT NULL,
    chosen_tables     text[]      NOT NULL DEFAULT '{}',
    threshold         double precision,
    catalog_version   bigint,
    generated_sql     text,
    status            text        NOT NULL CHECK (status IN ('ok', 'error', 'cancelled')),
    sqlstate          char(5),
    error_message     text,
    row_count         bigint,
    rows_truncated    boolean     NOT NULL DEFAULT false,
    cache_hit         boolean     NOT NULL DEFAULT false,
    cache_tier        text        CHECK (cache_tier IN ('result', 'sql')),
    model             text,
    prompt_tokens     integer     NOT NULL DEFAULT 0,
    completion_tokens integer     NOT NULL DEFAULT 0,
    repair_rounds     integer     NOT NULL DEFAULT 0,
    total_ms          double precision NOT NULL,
    stage_ms          jsonb       NOT NULL DEFAULT '{}'
);

-- Time is how the log is read (recent questions, a window around an
-- incident) and how retention deletes it.
CREATE INDEX query_log_logged_at_idx ON atrium.query_log (logged_at);

COMMENT ON TABLE atrium.query_log IS
    'One row per natural-language question or RETRIEVE answered by Atrium: who asked, what was retrieved and generated, how it ended and how long each stage took. Written asynchronously; rows may be missing when the writer''s queue overflowed (see metric atrium_query_log_dropped_total). Old rows are deleted by --query-log-retention.';
COMMENT ON COLUMN atrium.query_log.id IS 'Row identifier, increasing in insertion order.';
COMMENT ON COLUMN atrium.query_log.logged_at IS 'When the question arrived at Atrium.';
COMMENT ON COLUMN atrium.query_log.request_id IS 'Request id of the question; the same id is on every log line of its stages (log attribute request_id).';
COMMENT ON COLUMN atrium.query_log.instance IS 'Atrium instance that answered (host name or pod name), to tell side-by-side instances apart.';
COMMENT ON COLUMN atrium.query_log.database_name IS 'Database the client connected to.';
COMMENT ON COLUMN atrium.query_log.role_name IS 'Role the client authenticated as; the generated SQL ran with its privileges.';
COMMENT ON COLUMN atrium.query_log.application_name IS 'The client''s application_name startup parameter.';
COMMENT ON COLUMN atrium.query_log.kind IS 'nl: a question answered with rows; nl_sql: a question answered with its SQL only; retrieve: a RETRIEVE statement (tables only).';
COMMENT ON COLUMN atrium.query_log.question IS 'The question as the client wrote it.';
COMMENT ON COLUMN atrium.query_log.chosen_tables IS 'Schema-qualified tables retrieval chose, in rank order.';
COMMENT ON COLUMN atrium.query_log.threshold IS 'The ATR threshold score the chosen tables outranked; NULL when retrieval did not run (a cache hit).';
COMMENT ON COLUMN atrium.query_log.catalog_version IS 'Catalog version the question was answered from.';
COMMENT ON COLUMN atrium.query_log.generated_sql IS 'The validated SQL that ran (or, on failure, the last SQL generated); NULL for RETRIEVE.';
COMMENT ON COLUMN atrium.query_log.status IS 'ok, error or cancelled.';
COMMENT ON COLUMN atrium.query_log.sqlstate IS 'SQLSTATE of the error the client received; NULL on success.';
COMMENT ON COLUMN atrium.query_log.error_message IS 'Message of the error the client received; NULL on success.';
COMMENT ON COLUMN atrium.query_log.row_count IS 'Rows returned to the client.';
COMMENT ON COLUMN atrium.query_log.rows_truncated IS 'True when the result was cut at --nl-row-limit.';
COMMENT ON COLUMN atrium.query_log.cache_hit IS 'True when the answer came from the cache (see cache_tier).';
COMMENT ON COLUMN atrium.query_log.cache_tier IS 'result: rows served from the result cache; sql: SQL reused from the SQL cache and executed again; NULL: no cache hit.';
COMMENT ON COLUMN atrium.query_log.model IS 'LLM model that generated the SQL; NULL when no LLM was called.';
COMMENT ON COLUMN atrium.query_log.prompt_tokens IS 'Prompt tokens used by LLM calls for this question, repairs included.';
COMMENT ON COLUMN atrium.query_log.completion_tokens IS 'Completion tokens used by LLM calls for this question, repairs included.';
COMMENT ON COLUMN atrium.query_log.repair_rounds IS 'Validation repair rounds sent back to the LLM.';
COMMENT ON COLUMN atrium.query_log.total_ms IS 'Milliseconds from the question''s arrival to its last row.';
COMMENT ON COLUMN atrium.query_log.stage_ms IS 'Milliseconds per stage, e.g. {"retrieve": 4.1, "generate": 812.0, "validate": 1.2, "explain": 2.5, "execute": 9.8}.';
