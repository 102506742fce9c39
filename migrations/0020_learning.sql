-- What Atrium learns from the people who use it: verified question→SQL
-- examples, feedback on answers, and a business glossary. DBAs curate all
-- of it with ordinary SQL; `atrium examples ...` is a convenience over the
-- same tables. Nothing here is trusted as SQL to run: an example's SQL is
-- validated and run on the asking client's own session, with its
-- privileges, exactly like SQL an LLM wrote.

-- learning_version moves whenever an example, a glossary entry or a "wrong"
-- verdict changes, so that cached answers built from the old state are not
-- served again: the result cache keys on version + learning_version (both
-- only grow), while retrieval's table snapshot keys on version alone and
-- is not rebuilt for an example.
ALTER TABLE atrium.catalog_state ADD COLUMN learning_version bigint NOT NULL DEFAULT 0;
COMMENT ON COLUMN atrium.catalog_state.learning_version IS 'Incremented by every change to atrium.examples or atrium.glossary and by every "wrong" verdict in atrium.feedback; part of the result cache''s key, so such a change evicts cached answers.';

CREATE FUNCTION atrium.bump_learning_version() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE atrium.catalog_state SET learning_version = learning_version + 1;
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION atrium.bump_learning_version() IS 'Statement trigger: moves catalog_state.learning_version after a change Atrium''s answers depend on.';

CREATE TABLE atrium.examples (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    question    text        NOT NULL CHECK (btrim(question) <> ''),
    sql         text        NOT NULL CHECK (btrim(sql) <> ''),
    tables      text[]      NOT NULL DEFAULT '{}',
    added_by    text        NOT NULL DEFAULT current_user,
    added_at    timestamptz NOT NULL DEFAULT now(),
    source      text        NOT NULL DEFAULT 'sql' CHECK (source IN ('sql', 'cli', 'import', 'feedback')),
    feedback_id bigint,
    enabled     boolean     NOT NULL DEFAULT true,
    note        text
);
CREATE INDEX examples_added_at_idx ON atrium.examples (added_at);
COMMENT ON TABLE atrium.examples IS 'Verified question→SQL pairs ("golden SQL"). A question close to an example''s gets the example''s tables as retrieval evidence and the example as a few-shot pair in the prompt; a question equal to one (ignoring case, blanks and trailing punctuation) runs its SQL without an LLM call, still validated and run with the asking client''s privileges. Add rows with INSERT or `atrium examples add`.';
COMMENT ON COLUMN atrium.examples.id IS 'Example identifier.';
COMMENT ON COLUMN atrium.examples.question IS 'The question as a user would ask it.';
COMMENT ON COLUMN atrium.examples.sql IS 'One read-only SELECT that answers it. Validated by `atrium examples add` (parse, then EXPLAIN as the adding role) and again every time it is used, as the asking role.';
COMMENT ON COLUMN atrium.examples.tables IS 'Schema-qualified relations the SQL reads. Filled from PostgreSQL''s parse tree by `atrium examples add`; when left empty, Atrium extracts them when it loads the example.';
COMMENT ON COLUMN atrium.examples.added_by IS 'Role that added the example.';
COMMENT ON COLUMN atrium.examples.added_at IS 'When the example was added.';
COMMENT ON COLUMN atrium.examples.source IS 'sql (an INSERT), cli (`atrium examples add`), import (`atrium examples import`) or feedback (promoted from atrium.feedback).';
COMMENT ON COLUMN atrium.examples.feedback_id IS 'The atrium.feedback row it was promoted from, when source is feedback.';
COMMENT ON COLUMN atrium.examples.enabled IS 'false keeps the row but stops Atrium from using it.';
COMMENT ON COLUMN atrium.examples.note IS 'Free text for curators.';

CREATE TRIGGER examples_learning_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON atrium.examples
    FOR EACH STATEMENT EXECUTE FUNCTION atrium.bump_learning_version();

CREATE TABLE atrium.feedback (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    given_at         timestamptz NOT NULL DEFAULT now(),
    request_id       text        NOT NULL,
    database_name    text        NOT NULL,
    role_name        text        NOT NULL,
    application_name text        NOT NULL DEFAULT '',
    question         text        NOT NULL,
    sql              text,
    tables           text[]      NOT NULL DEFAULT '{}',
    verdict          text        NOT NULL CHECK (verdict IN ('good', 'wrong')),
    hint             text,
    corrected_sql    text,
    candidate        boolean     NOT NULL DEFAULT false,
    example_id       bigint      REFERENCES atrium.examples (id) ON DELETE SET NULL
);
CREATE INDEX feedback_request_id_idx ON atrium.feedback (request_id);
CREATE INDEX feedback_candidates_idx ON atrium.feedback (given_at) WHERE candidate AND example_id IS NULL;
COMMENT ON TABLE atrium.feedback IS 'Verdicts users gave on their session''s last question with /* nl-feedback: good */ or /* nl-feedback: wrong — <hint or corrected SQL> */. request_id joins it to atrium.query_log. A good answer, or a corrected SQL that validated, is a candidate example; promote one with SELECT atrium.promote_feedback(id) or `atrium examples promote`.';
COMMENT ON COLUMN atrium.feedback.id IS 'Feedback identifier.';
COMMENT ON COLUMN atrium.feedback.given_at IS 'When the feedback was given.';
COMMENT ON COLUMN atrium.feedback.request_id IS 'Request id of the judged question (atrium.query_log.request_id).';
COMMENT ON COLUMN atrium.feedback.database_name IS 'Database the client was connected to.';
COMMENT ON COLUMN atrium.feedback.role_name IS 'Role that gave the feedback (and asked the question).';
COMMENT ON COLUMN atrium.feedback.application_name IS 'The client''s application_name.';
COMMENT ON COLUMN atrium.feedback.question IS 'The judged question.';
COMMENT ON COLUMN atrium.feedback.sql IS 'The SQL that answered it.';
COMMENT ON COLUMN atrium.feedback.tables IS 'Relations the candidate SQL reads (corrected_sql when given, else sql), schema-qualified.';
COMMENT ON COLUMN atrium.feedback.verdict IS 'good or wrong.';
COMMENT ON COLUMN atrium.feedback.hint IS 'For wrong: what the user said was wrong, when it was not SQL.';
COMMENT ON COLUMN atrium.feedback.corrected_sql IS 'For wrong: the user''s corrected SQL, kept only when it validated (one read-only SELECT, EXPLAIN as the user''s role).';
COMMENT ON COLUMN atrium.feedback.candidate IS 'true when this feedback can become an example: a good verdict, or a wrong one with a corrected SQL that validated.';
COMMENT ON COLUMN atrium.feedback.example_id IS 'The example it was promoted to; NULL while not promoted.';

-- A wrong verdict evicts cached answers: the cache key moves with
-- learning_version. This is wider than the one question (every cached
-- answer is recomputed once), which a rare, deliberate act can afford;
-- Atrium also deletes the judged question's own entries at once.
CREATE TRIGGER feedback_wrong_learning_version AFTER INSERT ON atrium.feedback
    FOR EACH ROW WHEN (NEW.verdict = 'wrong') EXECUTE FUNCTION atrium.bump_learning_version();

CREATE FUNCTION atrium.promote_feedback(feedback bigint) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    f  atrium.feedback%ROWTYPE;
    ex bigint;
BEGIN
    -- The parameter is qualified: a bare "feedback" would also name the
    -- table's row, and PL/pgSQL refuses the ambiguity (42702).
    SELECT * INTO f FROM atrium.feedback WHERE id = promote_feedback.feedback FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'feedback % does not exist', feedback USING ERRCODE = 'no_data_found';
    END IF;
    IF f.example_id IS NOT NULL THEN
        RETURN f.example_id;
    END IF;
    IF NOT f.candidate THEN
        RAISE EXCEPTION 'feedback % is not a candidate example', feedback
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'Only a good verdict, or a wrong one whose corrected SQL validated, can become an example.';
    END IF;
    INSERT INTO atrium.examples (question, sql, tables, source, feedback_id)
    VALUES (f.question, coalesce(f.corrected_sql, f.sql), f.tables, 'feedback', f.id)
    RETURNING id INTO ex;
    UPDATE atrium.feedback SET example_id = ex WHERE id = f.id;
    RETURN ex;
END
$$;
COMMENT ON FUNCTION atrium.promote_feedback(bigint) IS 'Turns a candidate feedback row into an example and returns the example''s id (the existing one when already promoted). Runs with the caller''s privileges: it needs INSERT on atrium.examples.';

CREATE TABLE atrium.glossary (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    term         text        NOT NULL CHECK (btrim(term) <> ''),
    definition   text        NOT NULL CHECK (btrim(definition) <> ''),
    sql_fragment text,
    tables       text[]      NOT NULL DEFAULT '{}',
    reviewed     boolean     NOT NULL DEFAULT true,
    source       text        NOT NULL DEFAULT 'sql' CHECK (source IN ('sql', 'cli', 'llm')),
    added_by     text        NOT NULL DEFAULT current_user,
    added_at     timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX glossary_term_key ON atrium.glossary (lower(btrim(term)));
COMMENT ON TABLE atrium.glossary IS 'Business terms and what they mean in this database ("active customer" means status = ''active'' and an order in the last 90 days). A reviewed term named in a question adds its tables to retrieval and its definition to the prompt. DBAs fill it with SQL; `atrium catalog sync --llm-url` may propose entries from comments, marked unreviewed.';
COMMENT ON COLUMN atrium.glossary.id IS 'Entry identifier.';
COMMENT ON COLUMN atrium.glossary.term IS 'The term as users say it; matched in questions ignoring case, blanks and word endings. Unique ignoring case.';
COMMENT ON COLUMN atrium.glossary.definition IS 'What the term means, in words; shown to the LLM.';
COMMENT ON COLUMN atrium.glossary.sql_fragment IS 'Optional SQL that expresses the term, e.g. a WHERE condition; shown to the LLM, never run by itself.';
COMMENT ON COLUMN atrium.glossary.tables IS 'Schema-qualified relations the term is about; retrieval chooses them when the term is named.';
COMMENT ON COLUMN atrium.glossary.reviewed IS 'false for entries proposed by an LLM and not yet checked by a person; Atrium uses only reviewed entries.';
COMMENT ON COLUMN atrium.glossary.source IS 'sql (an INSERT), cli, or llm (proposed by `atrium catalog sync --llm-url`).';
COMMENT ON COLUMN atrium.glossary.added_by IS 'Role that added the entry.';
COMMENT ON COLUMN atrium.glossary.added_at IS 'When the entry was added.';

CREATE TRIGGER glossary_learning_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON atrium.glossary
    FOR EACH STATEMENT EXECUTE FUNCTION atrium.bump_learning_version();

-- A question equal to an example's is answered with the example's SQL and
-- no LLM call; the log says which example answered.
ALTER TABLE atrium.query_log ADD COLUMN example_id bigint;
ALTER TABLE atrium.query_log ADD COLUMN follow_up_of text;
COMMENT ON COLUMN atrium.query_log.example_id IS 'The atrium.examples row whose SQL answered the question without an LLM call (its question equalled the example''s); NULL otherwise.';
COMMENT ON COLUMN atrium.query_log.follow_up_of IS 'request_id of the session''s previous question when this one was answered as its follow-up; NULL for a question asked on its own.';

-- Feedback next to the question it judges, for DBAs reading the log.
CREATE VIEW atrium.query_log_feedback AS
SELECT f.id AS feedback_id, f.given_at, f.verdict, f.hint, f.corrected_sql, f.candidate, f.example_id,
       q.id AS query_log_id, q.logged_at, q.request_id, q.database_name, q.role_name, q.kind,
       q.question, q.chosen_tables, q.generated_sql, q.status, q.cache_hit
FROM atrium.feedback f
LEFT JOIN atrium.query_log q ON q.request_id = f.request_id;
COMMENT ON VIEW atrium.query_log_feedback IS 'Each feedback row with the query_log row of the question it judges (NULL columns when that log row was dropped or trimmed).';
