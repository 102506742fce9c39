// Package sqlgen answers natural-language questions: it retrieves the tables
// a question needs, prompts an LLM for one SELECT, validates it with
// PostgreSQL's parser and on the client's own session (repairing it with the
// LLM when it fails), and runs it read-only with the client's privileges.
// Answers are cached by the result cache.
//
// Pipeline answers one question at a time for the question layer (package
// question, which recognises questions and decides what the asking role may
// see before a retrieval reaches the pipeline). Its errors are *proxy.Error
// values with the SQLSTATEs documented at the Code constants.
package sqlgen

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/atriumdb/atrium/proxy"
	"github.com/atriumdb/atrium/proxy/resultcache"
)

// Config holds the pipeline's settings.
type Config struct {
	// RowLimit caps the rows a question returns (--nl-row-limit). Default
	// 1000.
	RowLimit int
	// StatementTimeout is the statement_timeout the generated SQL runs under
	// (--nl-statement-timeout). Default 30s.
	StatementTimeout time.Duration
	// MaxRepairs is how many times failed SQL is sent back to the LLM.
	// Default 2; negative means none.
	MaxRepairs int
	// GenerateTimeout bounds retrieval, generation and validation of one
	// question. Default 2m.
	GenerateTimeout time.Duration
	// SampleRows is how many rows of each table the prompt shows. Default 3;
	// negative means none.
	SampleRows int
	// Model identifies the generator's model and options in cache keys
	// (e.g. "gpt-4o-mini t=0").
	Model string
	// MaxCachedBytes stops keeping a result's rows for the cache once they
	// pass this size (the result cache has its own cap too). Default 1 MiB.
	MaxCachedBytes int
}

func (c Config) withDefaults() Config {
	if c.RowLimit <= 0 {
		c.RowLimit = 1000
	}
	if c.StatementTimeout <= 0 {
		c.StatementTimeout = 30 * time.Second
	}
	if c.MaxRepairs == 0 {
		c.MaxRepairs = 2
	}
	if c.MaxRepairs < 0 {
		c.MaxRepairs = 0
	}
	if c.GenerateTimeout <= 0 {
		c.GenerateTimeout = 2 * time.Minute
	}
	if c.SampleRows == 0 {
		c.SampleRows = 3
	}
	if c.SampleRows < 0 {
		c.SampleRows = 0
	}
	if c.MaxCachedBytes <= 0 {
		c.MaxCachedBytes = 1 << 20
	}
	return c
}

// ResultCache is what the pipeline needs of the result cache
// (*resultcache.Cache). Implementations never fail: trouble is a miss.
type ResultCache interface {
	GetResult(ctx context.Context, key string) (*resultcache.Result, bool)
	PutResult(ctx context.Context, key string, r *resultcache.Result)
	GetSQL(ctx context.Context, key string) (*resultcache.SQLEntry, bool)
	PutSQL(ctx context.Context, key string, e *resultcache.SQLEntry)
}

// VersionSource tells the catalog's current version, which is part of every
// cache key so a catalog change invalidates what was cached before it.
type VersionSource interface {
	CatalogVersion(ctx context.Context) (int64, error)
}

// Options are the pipeline's dependencies.
type Options struct {
	// Retriever is required.
	Retriever Retriever
	// Generator is the LLM; nil means none is configured, and questions
	// fail with SQLSTATE 55000 saying so and what retrieval found.
	Generator Generator
	// Cache is the result cache; nil caches nothing.
	Cache ResultCache
	// Versions is the catalog version; nil disables caching (there is no
	// safe key without it).
	Versions VersionSource
	Logger   *slog.Logger
	// Registerer receives the pipeline's metrics; nil registers nothing.
	Registerer prometheus.Registerer
	// OnQuestion, when set, is called once per answered or failed
	// question of every form (RETRIEVE through Pipeline.Tracer, and per
	// execution of a prepared question), on the asking session's
	// goroutine, with a context carrying the request id. The record holds
	// the question's retrieval and LLM calls, so the query log and every
	// metric outside the pipeline come from it. It must not block: the
	// query log only queues the record.
	OnQuestion func(ctx context.Context, r QuestionRecord)
}

// execMargin is what the execution phase's deadline adds to the statement
// timeout: the generated SQL itself is bounded by the server's
// statement_timeout (SQLSTATE 57014 from the server, the clearest error), and
// the margin covers the few statements Atrium adds around it (opening and
// closing the scope, the identity and privilege reads, cacheable's catalog
// read).
const execMargin = 5 * time.Second

// cacheTimeout bounds one result-cache call: the cache is an optimisation,
// and a slow store must not eat a question's generation or execution time.
const cacheTimeout = time.Second

// boundedCache gives every cache call its own short deadline. Reads are
// derived from the question's context (a cancelled question stops
// waiting); writes only keep its values (request id): they run after the
// client has its rows, and a client that hangs up right after must not cut
// the store short, which the deadline still bounds.
type boundedCache struct{ c ResultCache }

func (b boundedCache) GetResult(ctx context.Context, key string) (*resultcache.Result, bool) {
	ctx, cancel := context.WithTimeout(ctx, cacheTimeout)
	defer cancel()
	return b.c.GetResult(ctx, key)
}

func (b boundedCache) PutResult(ctx context.Context, key string, r *resultcache.Result) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cacheTimeout)
	defer cancel()
	b.c.PutResult(ctx, key, r)
}

func (b boundedCache) GetSQL(ctx context.Context, key string) (*resultcache.SQLEntry, bool) {
	ctx, cancel := context.WithTimeout(ctx, cacheTimeout)
	defer cancel()
	return b.c.GetSQL(ctx, key)
}

func (b boundedCache) PutSQL(ctx context.Context, key string, e *resultcache.SQLEntry) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cacheTimeout)
	defer cancel()
	b.c.PutSQL(ctx, key, e)
}

// Pipeline generates, validates, runs and caches answers to questions.
// Safe for concurrent use.
type Pipeline struct {
	cfg    Config
	ret    Retriever
	gen    Generator
	cache  ResultCache
	vers   VersionSource
	log    *slog.Logger
	m      *pipelineMetrics
	flight flightGroup
	ids    identityMemo

	onQuestion func(ctx context.Context, r QuestionRecord)
}

// New returns a Pipeline.
func New(cfg Config, opts Options) (*Pipeline, error) {
	if opts.Retriever == nil {
		return nil, errors.New("sqlgen: a Retriever is required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Versions == nil || opts.Cache == nil {
		opts.Cache = nil
	} else {
		opts.Cache = boundedCache{opts.Cache}
	}
	p := &Pipeline{
		cfg: cfg.withDefaults(), ret: opts.Retriever, gen: opts.Generator, cache: opts.Cache,
		vers: opts.Versions, log: opts.Logger, m: newPipelineMetrics(opts.Registerer),
		onQuestion: opts.OnQuestion,
	}
	p.flight.calls = map[string]*flightCall{}
	return p, nil
}

// Config returns the effective configuration.
func (p *Pipeline) Config() Config { return p.cfg }

// Statement returns the proxy.Statement that answers one question for the
// session info describes: rows, or with sqlOnly the generated SQL alone.
// The question layer (package question) recognises questions and calls it;
// the Statement belongs to that session.
func (p *Pipeline) Statement(info proxy.SessionInfo, question string, sqlOnly bool) proxy.Statement {
	return p.StatementAsk(info, Ask{Question: question}, sqlOnly)
}

// StatementAsk is Statement for a question asked in context: a follow-up
// of the session's previous turn (a.Previous), which retrieval, the prompt
// and the cache key all take into account.
func (p *Pipeline) StatementAsk(info proxy.SessionInfo, a Ask, sqlOnly bool) proxy.Statement {
	return &statement{p: p, info: info, question: a.Question, previous: a.Previous, sqlOnly: sqlOnly}
}

// identity is what decides, besides the question, which SQL and rows are
// right for a session: who asks, where names resolve, and every setting that
// changes the rows or their text. It is read on the session at execution
// time (a prepared question may run after SET), and all of it is in the
// cache key.
type identity struct {
	role, sessionUser, searchPath, database string
	// settings are the row- and text-changing settings, "name=value"
	// lines (see identitySelect).
	settings string
}

// identitySelect reads the identity. The settings are those that change
// a result's rows or their text without a function call (time zone,
// encoding, date, interval, float and bytea output, locale-dependent
// formatting, the text search default, row security, NULL comparison).
//
// The database's oid is in it too: a database dropped and created again
// under the same name (a reloaded sample, a restored dump) holds other
// rows, and its new catalog counts its versions from the start again, so
// name and version alone could key the old database's answers (seen when
// `make demo` reloaded its sample database with Redis still warm).
//
// Custom (dotted) settings such as app.tenant are not in it: reading one
// takes current_setting (STABLE), pg_settings (a view over a STABLE
// function) or a row-level security policy, and cacheable never stores a
// result that involves any of those, so no cached result depends on them.
// Listing them would need pg_settings, whose scan of every setting cost
// about 1.6 ms a question (against 0.03 ms for this query), twice per
// cache hit.
const identitySelect = `SELECT current_user, session_user, pg_catalog.current_setting('search_path'), pg_catalog.current_database(),
  pg_catalog.concat_ws(pg_catalog.chr(10),
    'TimeZone=' || pg_catalog.current_setting('TimeZone'),
    'client_encoding=' || pg_catalog.current_setting('client_encoding'),
    'DateStyle=' || pg_catalog.current_setting('DateStyle'),
    'IntervalStyle=' || pg_catalog.current_setting('IntervalStyle'),
    'extra_float_digits=' || pg_catalog.current_setting('extra_float_digits'),
    'bytea_output=' || pg_catalog.current_setting('bytea_output'),
    'lc_monetary=' || pg_catalog.current_setting('lc_monetary'),
    'lc_numeric=' || pg_catalog.current_setting('lc_numeric'),
    'lc_time=' || pg_catalog.current_setting('lc_time'),
    'default_text_search_config=' || pg_catalog.current_setting('default_text_search_config'),
    'row_security=' || pg_catalog.current_setting('row_security'),
    'transform_null_equals=' || pg_catalog.current_setting('transform_null_equals'),
    'database_oid=' || (SELECT d.oid FROM pg_catalog.pg_database d WHERE d.datname = pg_catalog.current_database()))`

const identityColumns = 5

func parseIdentity(r [][]byte) identity {
	return identity{role: string(r[0]), sessionUser: string(r[1]), searchPath: string(r[2]), database: string(r[3]), settings: string(r[4])}
}

func sessionIdentity(ctx context.Context, up proxy.Upstream) (identity, error) {
	res, err := up.Query(ctx, identitySelect)
	if err != nil {
		return identity{}, err
	}
	if len(res.Rows) != 1 || len(res.Rows[0]) != identityColumns {
		return identity{}, errorf(CodeInternal, "unexpected answer to the session identity query")
	}
	return parseIdentity(res.Rows[0]), nil
}

// normalizeQuestion folds white space and drops trailing punctuation. Case is
// kept: "orders of 'Smith'" and "orders of 'smith'" may need different SQL.
func normalizeQuestion(q string) string {
	q = strings.Join(strings.Fields(q), " ")
	return strings.TrimRight(q, " ?.!;")
}

// contextKey is the part of the cache key that the question's context
// decides: empty for a question asked on its own, else the previous turn's
// question and SQL, normalised. A marker byte keeps it apart from any
// question text, so a follow-up and the same words asked fresh never share
// a key (nor a singleflight generation, nor an SQL-tier entry, which use
// the same key).
func contextKey(prev *Turn) string {
	if prev == nil {
		return ""
	}
	return "\x01follow-up\x00" + normalizeQuestion(prev.Question) + "\x00" + strings.Join(strings.Fields(prev.SQL), " ")
}

// cacheKey hashes everything that decides a question's SQL and rows.
func (p *Pipeline) cacheKey(question string, prev *Turn, version int64, id identity) string {
	h := sha256.New()
	for _, part := range []string{
		promptVersion, normalizeQuestion(question), contextKey(prev), strconv.FormatInt(version, 10),
		id.database, id.role, id.sessionUser, id.searchPath, id.settings, p.cfg.Model,
		strconv.Itoa(p.cfg.RowLimit), strconv.Itoa(p.cfg.SampleRows),
	} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:20])
}

// plan is a question's validated SQL.
type plan struct {
	sql       string
	tables    []string
	relations []string
	fields    []pgproto3.FieldDescription
	// exampleID is the curated example whose SQL this is (0: generated
	// or cached).
	exampleID int64
}

// generate retrieves, prompts, generates and validates: the uncached path.
// It runs inside sc on the asking client's session and reports its stages
// to tr.
func (p *Pipeline) generate(ctx context.Context, sc *scope, a Ask, tr *Tracer) (*plan, error) {
	question := a.Question
	t0 := time.Now()
	r, err := p.ret.Retrieve(ctx, sc.up, a)
	tr.Retrieved(time.Since(t0), r, err)
	if err != nil {
		return nil, asClientError(err, CodeInternal, "table retrieval failed")
	}
	// A question equal to a curated example's is answered with the
	// example's SQL, without the LLM, when that SQL passes the same
	// validation as generated SQL on the client's session. Not for a
	// follow-up: the example answers the words on their own, not in the
	// previous turn's context.
	if ex := exactExample(r); ex != nil && a.Previous == nil {
		pl, fallback, err := p.reuse(ctx, sc, ex, tr)
		if err == nil {
			return pl, nil
		}
		if p.gen == nil || !fallback {
			return nil, err
		}
		p.log.InfoContext(ctx, "example SQL failed validation; asking the LLM", "example", ex.ID, "err", err)
		tr.rec.SQL = ""
	}
	if len(r.Tables) == 0 {
		// The retriever abstained: no table clears its threshold. The LLM is
		// not asked, since it would have to invent a schema.
		e := &proxy.Error{Code: CodeNoTables, Message: "no table in the catalog answers the question",
			Hint: "Rephrase the question with words of the data it is about, ask RETRIEVE <question> to see the ranking, or check that the catalog is built (atrium catalog sync)."}
		var detail []string
		if len(r.Closest) > 0 {
			detail = append(detail, "Closest tables: "+strings.Join(r.Closest, ", ")+".")
		}
		if r.AbstainReason != "" {
			detail = append(detail, "Retrieval chose none: "+r.AbstainReason+".")
		}
		e.Detail = strings.Join(detail, " ")
		return nil, e
	}
	tables := tr.rec.Tables
	if p.gen == nil {
		return nil, &proxy.Error{Code: CodeNoLLM,
			Message: "natural-language questions need an LLM endpoint, and none is configured",
			Detail:  "RETRIEVE found: " + strings.Join(tables, ", "),
			Hint:    "Start atrium serve with --llm-url (and --llm-model, ATRIUM_LLM_API_KEY), or ask RETRIEVE <question> to see the tables alone."}
	}
	if p.cfg.SampleRows > 0 {
		t1 := time.Now()
		p.sample(ctx, sc, r)
		tr.Stage("sample", time.Since(t1))
	}
	prompt := BuildPrompt(question, r)
	if len(r.Examples) > 0 || len(r.Glossary) > 0 || r.Previous != nil {
		p.log.DebugContext(ctx, "prompt context", "examples", min(len(r.Examples), maxPromptExamples), "glossary", len(r.Glossary), "follow_up", r.Previous != nil)
	}
	msgs := prompt.Messages
	var (
		lastErr error
		lastSQL string
	)
	for attempt := 0; attempt <= p.cfg.MaxRepairs; attempt++ {
		purpose := PurposeGenerate
		if attempt > 0 {
			purpose = PurposeRepair
		}
		t1 := time.Now()
		g, err := p.gen.Generate(ctx, msgs)
		var u Usage
		if err == nil {
			u = g.Usage
		}
		tr.llmCall(purpose, time.Since(t1), u, err)
		if err != nil {
			return nil, llmClientError(err)
		}
		lastSQL = ExtractSQL(g.Text)
		tr.rec.SQL = lastSQL
		t2 := time.Now()
		checked, err := Check(lastSQL)
		var fields []pgproto3.FieldDescription
		if err == nil {
			tr.rec.SQL = checked.SQL
			fields, err = validate(ctx, sc, checked.SQL)
		}
		tr.Stage("validate", time.Since(t2))
		if err == nil {
			p.log.DebugContext(ctx, "generated SQL accepted", "attempt", attempt+1, "prompt_tokens_est", prompt.EstTokens)
			return &plan{sql: checked.SQL, tables: tables, relations: checked.Relations, fields: fields}, nil
		}
		lastErr = err
		var pe *proxy.Error
		if !errors.As(err, &pe) && !repairable(err) {
			// Permissions, timeouts, a broken connection: the LLM cannot fix them.
			return nil, err
		}
		p.log.DebugContext(ctx, "generated SQL rejected", "question", question, "attempt", attempt+1, "sql", lastSQL, "err", err)
		msgs = repairMessages(msgs, g.Text, describeErr(err))
	}
	return nil, gaveUp(lastErr, lastSQL, p.cfg.MaxRepairs+1)
}

// exactExample returns the first example whose question equals the asked
// one (the retrieval holds only examples the asking role may read).
func exactExample(r *Retrieval) *Example {
	for i := range r.Examples {
		if r.Examples[i].Exact && strings.TrimSpace(r.Examples[i].SQL) != "" {
			return &r.Examples[i]
		}
	}
	return nil
}

// reuse validates an example's SQL exactly as generated SQL is validated
// (parse, one read-only statement, the function allow-list, EXPLAIN and
// Describe on the client's own session, under its role) and makes it the
// plan. Its errors name the example, not the LLM; fallback says the LLM
// may try instead (the SQL was wrong for this session, and the session
// itself is fine).
func (p *Pipeline) reuse(ctx context.Context, sc *scope, ex *Example, tr *Tracer) (_ *plan, fallback bool, _ error) {
	t0 := time.Now()
	checked, err := Check(ex.SQL)
	var fields []pgproto3.FieldDescription
	if err == nil {
		fields, err = validate(ctx, sc, checked.SQL)
	}
	tr.Stage("validate", time.Since(t0))
	if err != nil {
		var pe *proxy.Error
		return nil, errors.As(err, &pe) || repairable(err), exampleError(ex.ID, err)
	}
	tables := ex.Tables
	if len(tables) == 0 {
		tables = checked.Relations
	}
	tr.rec.SQL, tr.rec.ExampleID = checked.SQL, ex.ID
	p.log.DebugContext(ctx, "example SQL answers the question", "example", ex.ID)
	return &plan{sql: checked.SQL, tables: append([]string(nil), tables...), relations: checked.Relations, fields: fields, exampleID: ex.ID}, false, nil
}

// exampleError says which example's SQL failed and keeps the SQLSTATE.
// The SQL itself is not repeated: the client sees it only in the NOTICE
// of an answer.
func exampleError(id int64, err error) error {
	hint := fmt.Sprintf("Fix or disable the example: UPDATE atrium.examples SET enabled = false WHERE id = %d.", id)
	var pe *proxy.Error
	if errors.As(err, &pe) {
		return &proxy.Error{Code: pe.Code, Message: fmt.Sprintf("the SQL of example %d failed validation: %s", id, strings.TrimPrefix(pe.Message, "generated SQL ")), Detail: pe.Detail, Hint: hint, Err: err}
	}
	var ue *proxy.UpstreamError
	if errors.As(err, &ue) {
		return &proxy.Error{Code: ue.Code, Message: fmt.Sprintf("the SQL of example %d failed validation: %s", id, ue.Message), Detail: ue.Detail, Hint: firstNonEmptyString(ue.Hint, hint), Err: err}
	}
	return err
}

func firstNonEmptyString(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// gaveUp reports the last failure after the repair rounds, with its SQLSTATE.
func gaveUp(err error, sql string, attempts int) error {
	detail := "Last SQL: " + clip(oneLine(sql), 2000)
	var pe *proxy.Error
	if errors.As(err, &pe) {
		return &proxy.Error{Code: pe.Code, Message: fmt.Sprintf("could not generate valid SQL in %d attempts: %s", attempts, pe.Message), Detail: detail, Err: err}
	}
	var ue *proxy.UpstreamError
	if errors.As(err, &ue) {
		return &proxy.Error{Code: ue.Code, Message: fmt.Sprintf("could not generate valid SQL in %d attempts: %s", attempts, ue.Message), Detail: detail, Hint: ue.Hint, Err: err}
	}
	return err
}

func llmClientError(err error) error {
	var le *LLMError
	if errors.As(err, &le) {
		if le.Timeout {
			return &proxy.Error{Code: CodeTimeout, Message: "the LLM did not answer in time", Err: err}
		}
		return &proxy.Error{Code: CodeLLMFailed, Message: "the LLM endpoint failed: " + le.Msg, Err: err}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return &proxy.Error{Code: CodeLLMFailed, Message: "the LLM endpoint failed", Err: err}
}

// validate checks sql on the client's session without computing a row and
// returns its row description. EXPLAIN runs parse analysis, planning and
// the executor's permission checks under the client's role, privileges and
// search_path, so unknown tables and columns, type errors and permission
// denials surface as the server's own errors; Describe (Parse and Describe
// of the unnamed statement) then yields the real row description, which the
// extended protocol's Describe needs before Execute. Before either, every
// function and operator the SQL names is resolved in the session's catalog
// (checkCalls): EXPLAIN may evaluate functions while planning.
func validate(ctx context.Context, sc *scope, sql string) ([]pgproto3.FieldDescription, error) {
	if err := checkCalls(ctx, sc, sql); err != nil {
		return nil, err
	}
	if err := sc.explain(ctx, sql); err != nil {
		return nil, err
	}
	fields, err := sc.describe(ctx, sql)
	if err != nil {
		return nil, err
	}
	return copyFields(fields), nil
}

func copyFields(fs []pgproto3.FieldDescription) []pgproto3.FieldDescription {
	out := make([]pgproto3.FieldDescription, len(fs))
	for i, f := range fs {
		out[i] = f
		out[i].Name = append([]byte(nil), f.Name...)
		out[i].Format = 0 // Execute sends text
	}
	return out
}

// sample fills in up to SampleRows rows of each table that came without
// them, read on the client's session so the prompt only shows what the
// client may read. A table it cannot read is shown without rows.
func (p *Pipeline) sample(ctx context.Context, sc *scope, r *Retrieval) {
	for i := range r.Tables {
		t := &r.Tables[i]
		if t.SampleRows != nil || len(t.Columns) == 0 {
			continue
		}
		cols := make([]string, len(t.Columns))
		for j, c := range t.Columns {
			cols[j] = quoteIdent(c.Name) + "::text"
		}
		sql := fmt.Sprintf("SELECT %s FROM %s.%s LIMIT %d", strings.Join(cols, ", "), quoteIdent(t.Schema), quoteIdent(t.Name), p.cfg.SampleRows)
		res, err := sc.query(ctx, sql)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			p.log.DebugContext(ctx, "no sample rows for prompt", "table", t.QualifiedName(), "err", err)
			continue
		}
		rows := make([][]*string, 0, len(res.Rows))
		for _, row := range res.Rows {
			vals := make([]*string, len(row))
			for j, v := range row {
				if v != nil {
					s := string(v)
					vals[j] = &s
				}
			}
			rows = append(rows, vals)
		}
		t.SampleRows = rows
	}
}

// identityAndPrivileges reads the session's identity and re-checks, in the
// same round trip, that its current role may still SELECT every relation a
// cached result came from. The check is has_table_privilege by name, which
// costs about as much as SELECT 1; a relation that no longer resolves is an
// error, read as "not allowed". relations is the full list cacheable
// returned when the result was stored (CTE names scoped, security_invoker
// views expanded); row-level security and opaque functions are checked
// then too: such results are never cached.
func identityAndPrivileges(ctx context.Context, up proxy.Upstream, relations []string) (identity, bool, error) {
	check := "true"
	if len(relations) > 0 {
		parts := make([]string, len(relations))
		for i, r := range relations {
			parts[i] = "pg_catalog.has_table_privilege(" + literal(r) + ", 'SELECT')"
		}
		check = strings.Join(parts, " AND ")
	}
	res, err := up.Query(ctx, identitySelect+", "+check)
	if err != nil {
		var ue *proxy.UpstreamError
		if errors.As(err, &ue) && (ue.Code == "42P01" || ue.Code == "3F000") {
			// A relation was dropped or the search_path changed:
			// not servable; the caller generates again.
			return identity{}, false, nil
		}
		return identity{}, false, err
	}
	if len(res.Rows) != 1 || len(res.Rows[0]) != identityColumns+1 {
		return identity{}, false, errorf(CodeInternal, "unexpected answer to the privilege check")
	}
	r := res.Rows[0]
	return parseIdentity(r), string(r[identityColumns]) == "t", nil
}

// identityMemo remembers each session's last identity, so a cache hit can
// look its entry up first and confirm the identity in the same round trip
// as the privilege check. A stale guess (SET ROLE, SET search_path) only
// costs a miss. Bounded; safe for concurrent use.
type identityMemo struct {
	mu  sync.Mutex
	ids map[uint64]identity
}

const identityMemoMax = 4096

func (m *identityMemo) get(session uint64) (identity, bool) {
	if session == 0 {
		return identity{}, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	id, ok := m.ids[session]
	return id, ok
}

func (m *identityMemo) put(session uint64, id identity) {
	if session == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ids == nil {
		m.ids = map[uint64]identity{}
	}
	if _, ok := m.ids[session]; !ok && len(m.ids) >= identityMemoMax {
		for k := range m.ids { // drop an arbitrary session: only a guess is lost
			delete(m.ids, k)
			break
		}
	}
	m.ids[session] = id
}

// literal quotes s as a string literal that reads the same whatever
// standard_conforming_strings is.
func literal(s string) string {
	if strings.Contains(s, `\`) {
		return "E'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", "''") + "'"
	}
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// flightGroup shares one generation among concurrent identical questions.
// Unlike x/sync/singleflight.DoChan, the leader runs the function on its own
// goroutine: the generation uses the leader's upstream session, which only
// its own goroutine may touch.
type flightGroup struct {
	mu    sync.Mutex
	calls map[string]*flightCall
}

type flightCall struct {
	done chan struct{}
	plan *plan
	err  error
}

// do runs fn unless a call for key is in flight, in which case it waits for
// that call's result (or ctx). shared reports a result from another session.
// A follower whose leader failed because the leader's own context ended
// runs fn itself.
func (g *flightGroup) do(ctx context.Context, key string, fn func() (*plan, error)) (pl *plan, shared bool, err error) {
	for {
		g.mu.Lock()
		if c, ok := g.calls[key]; ok {
			g.mu.Unlock()
			select {
			case <-c.done:
			case <-ctx.Done():
				return nil, false, ctx.Err()
			}
			if c.err != nil && (errors.Is(c.err, context.Canceled) || errors.Is(c.err, context.DeadlineExceeded)) && ctx.Err() == nil {
				continue
			}
			return c.plan, true, c.err
		}
		c := &flightCall{done: make(chan struct{})}
		g.calls[key] = c
		g.mu.Unlock()

		func() {
			defer func() {
				g.mu.Lock()
				delete(g.calls, key)
				g.mu.Unlock()
				close(c.done)
			}()
			c.plan, c.err = fn()
		}()
		return c.plan, false, c.err
	}
}

type pipelineMetrics struct {
	questions *prometheus.CounterVec // outcome
	stage     *prometheus.HistogramVec
	tokens    *prometheus.CounterVec
	repairs   prometheus.Counter
}

func newPipelineMetrics(reg prometheus.Registerer) *pipelineMetrics {
	m := &pipelineMetrics{
		questions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "atrium_nl_questions_total",
			Help: "Natural-language questions by outcome (result_cache, sql_cache, shared, generated, error).",
		}, []string{"outcome"}),
		stage: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "atrium_nl_stage_seconds",
			Help:    "Time spent per pipeline stage (retrieve, sample, llm, validate, execute).",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}, []string{"stage"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "atrium_nl_llm_tokens_total",
			Help: "LLM tokens used, as the endpoint reported them, by type (prompt, completion).",
		}, []string{"type"}),
		repairs: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "atrium_nl_repairs_total",
			Help: "Repair rounds: generated SQL sent back to the LLM with its error.",
		}),
	}
	if reg != nil {
		reg.MustRegister(m.questions, m.stage, m.tokens, m.repairs)
	}
	return m
}
