package sqlgen

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/atriumdb/atrium/proxy"
	"github.com/atriumdb/atrium/proxy/resultcache"
)

// statement is one question, owned by the session that asked it. Describe
// does the expensive part (cache look-up or generation and validation) so
// the extended protocol gets the real row description before Execute; the
// plan is reused by every Execute.
type statement struct {
	p    *Pipeline
	info proxy.SessionInfo
	// question is the question's text; sqlOnly asks for the SQL alone
	// (/* nl-sql: */) instead of rows.
	question string
	sqlOnly  bool
	// previous is the turn the question follows up (nil: asked on its
	// own); part of the cache key.
	previous *Turn

	key     string   // cache key; "" when caching is off for this question
	id      identity // the identity key was computed for
	version int64    // the catalog version key was computed for
	plan    *plan
	cached  *resultcache.Result // served by the next Execute, then dropped
	tr      *Tracer             // the current execution; nil between executions
}

var (
	_ proxy.Statement = (*statement)(nil)
	_ proxy.Kinded    = (*statement)(nil)
)

// sqlFields describes the one-column answer of /* nl-sql: ... */.
var sqlFields = []pgproto3.FieldDescription{{Name: []byte("sql"), DataTypeOID: 25, DataTypeSize: -1, TypeModifier: -1}}

// Kind implements proxy.Kinded: "nl" or "nl_sql", the names metrics and
// the query log use.
func (s *statement) Kind() string {
	if s.sqlOnly {
		return KindNLSQL
	}
	return KindNL
}

// Describe implements proxy.Statement.
func (s *statement) Describe(ctx context.Context, up proxy.Upstream) ([]pgproto3.FieldDescription, error) {
	ctx = s.tracer().Begin(ctx)
	if err := s.prepare(ctx, up); err != nil {
		return nil, err
	}
	if s.sqlOnly {
		return sqlFields, nil
	}
	return s.plan.fields, nil
}

func (s *statement) prepare(ctx context.Context, up proxy.Upstream) (err error) {
	if s.plan != nil {
		return nil
	}
	p := s.p
	outcome := "error"
	defer func() {
		p.m.questions.WithLabelValues(outcome).Inc()
		if err != nil {
			s.finish(ctx, err, 0, false)
		}
	}()
	q := s.question
	if q == "" {
		return &proxy.Error{Code: CodeSyntax, Message: "the question is empty", Hint: "Write it inside the comment: /* nl: how many orders were placed last month? */"}
	}
	if up.TxStatus() == 'E' {
		return errInFailedTx()
	}
	ctx, cancel := context.WithTimeout(ctx, p.cfg.GenerateTimeout)
	defer cancel()

	var version int64
	caching := p.cache != nil
	if caching {
		if version, err = p.vers.CatalogVersion(ctx); err != nil {
			p.log.WarnContext(ctx, "catalog version unknown; question not cached", "err", err)
			caching = false
		}
		s.tr.rec.CatalogVersion = version
		s.version = version
	}
	wantRows := caching && !s.sqlOnly && up.TxStatus() == 'I'
	// The identity decides the key. The session's last identity is a
	// guess, confirmed in a round trip that is needed anyway: the cached
	// result's privilege check, or the statement that opens the read-only
	// scope for the cached SQL's validation or for generation. A wrong
	// guess (the client ran SET since) costs one restart with the identity
	// that round trip read. Without a guess the identity is read on its own.
	for attempt := 0; ; attempt++ {
		outcome, err = s.prepareAs(ctx, up, version, caching, wantRows, attempt > 0)
		if !errors.Is(err, errIdentityChanged) || attempt > 0 {
			return err
		}
		p.log.DebugContext(ctx, "session identity changed since its last question; keying again")
	}
}

// errIdentityChanged says the identity guessed for a question's key is not
// the session's: prepare starts again with the identity read.
var errIdentityChanged = errors.New("session identity changed")

// prepareAs is one attempt of prepare; fresh forbids the guess. It returns
// the outcome metrics count.
func (s *statement) prepareAs(ctx context.Context, up proxy.Upstream, version int64, caching, wantRows, fresh bool) (outcome string, err error) {
	p, q := s.p, s.question
	outcome = "error"
	tried := ""
	guess, guessed := p.ids.get(s.info.ID)
	confirmed := false
	if guessed && !fresh && wantRows {
		// The fast path of a cache hit: one cache read, one round trip.
		s.key, s.id = p.cacheKey(q, s.previous, version, guess), guess
		tried = s.key
		if r, ok, read, err := s.lookupResult(ctx, up, guess); err != nil {
			return outcome, err
		} else if ok {
			s.serveCached(r)
			return "result_cache", nil
		} else if read != nil {
			// The privilege check read the identity: it is confirmed now.
			guess, confirmed = *read, true
		}
	}
	id := guess
	if !confirmed && (!guessed || fresh) {
		if id, err = sessionIdentity(ctx, up); err != nil {
			return outcome, err
		}
		p.ids.put(s.info.ID, id)
		confirmed = true
	}
	// want is the identity the scope must find; nil when confirmed.
	var want *identity
	if !confirmed {
		want = &id
	}
	key := p.cacheKey(q, s.previous, version, id)
	if caching {
		s.key, s.id = key, id
		if wantRows && key != tried {
			if r, ok, _, err := s.lookupResult(ctx, up, id); err != nil {
				return outcome, err
			} else if ok {
				s.serveCached(r)
				return "result_cache", nil
			}
		}
		if e, ok := p.cache.GetSQL(ctx, key); ok {
			t0 := time.Now()
			fields, err := s.describeOnSession(ctx, up, e.SQL, want)
			s.tr.Stage("validate", time.Since(t0))
			if err == nil {
				s.plan = &plan{sql: e.SQL, tables: e.Tables, relations: e.Relations, fields: fields}
				s.tr.rec.CacheTier = TierSQL
				return "sql_cache", nil
			}
			if !repairable(err) {
				return outcome, err
			}
			// Cached SQL that no longer fits the schema: generate anew.
			p.log.InfoContext(ctx, "cached SQL no longer valid; generating again", "question", q, "err", err)
			want = nil // describeOnSession confirmed it
		}
	}

	pl, shared, err := p.flight.do(ctx, key, func() (*plan, error) {
		sc, err := s.openScopeFor(ctx, up, want)
		if err != nil {
			return nil, err
		}
		pl, err := p.generate(ctx, sc, Ask{Question: q, Previous: s.previous}, s.tr)
		if cerr := sc.close(ctx); cerr != nil && err == nil {
			err = cerr
		}
		return pl, err
	})
	if err != nil {
		return outcome, err
	}
	if shared {
		// Another session generated it; the row description comes from
		// this session, under its own privileges.
		s.tr.rec.Tables, s.tr.rec.SQL, s.tr.rec.CacheTier = pl.tables, pl.sql, TierShared
		t0 := time.Now()
		fields, err := s.describeOnSession(ctx, up, pl.sql, want)
		s.tr.Stage("validate", time.Since(t0))
		if err != nil {
			return outcome, err
		}
		pl = &plan{sql: pl.sql, tables: pl.tables, relations: pl.relations, fields: fields, exampleID: pl.exampleID}
		outcome = "shared"
	} else {
		outcome = "generated"
		if caching {
			p.cache.PutSQL(ctx, key, &resultcache.SQLEntry{SQL: pl.sql, Tables: pl.tables, Relations: pl.relations})
		}
	}
	s.plan = pl
	return outcome, nil
}

// openScopeFor opens a scope on up; when want is set it confirms in the
// same round trip that the session is still want, and otherwise closes
// the scope and returns errIdentityChanged (remembering the identity read,
// so the next attempt keys on it).
func (s *statement) openScopeFor(ctx context.Context, up proxy.Upstream, want *identity) (*scope, error) {
	if want == nil {
		return openScope(ctx, up, s.p.cfg.StatementTimeout)
	}
	sc, id, err := openScopeAs(ctx, up, s.p.cfg.StatementTimeout)
	if err != nil {
		return nil, err
	}
	s.p.ids.put(s.info.ID, id)
	if id != *want {
		if err := sc.close(ctx); err != nil {
			return nil, err
		}
		return nil, errIdentityChanged
	}
	return sc, nil
}

// describeOnSession validates sql in a scope of its own.
// When want is set, the scope confirms the session is still want (see
// openScopeFor).
func (s *statement) describeOnSession(ctx context.Context, up proxy.Upstream, sql string, want *identity) ([]pgproto3.FieldDescription, error) {
	sc, err := s.openScopeFor(ctx, up, want)
	if err != nil {
		return nil, err
	}
	fields, err := validate(ctx, sc, sql)
	if cerr := sc.close(ctx); cerr != nil && err == nil {
		err = cerr
	}
	return fields, err
}

func (s *statement) serveCached(r *resultcache.Result) {
	s.plan = &plan{sql: r.SQL, tables: r.Tables, relations: r.Relations, fields: r.Fields}
	s.cached = r
	s.tr.rec.CacheTier = TierResult
}

// rekey computes the cache key for the session's identity id.
func (s *statement) rekey(id identity) {
	s.p.ids.put(s.info.ID, id)
	s.id, s.key = id, s.p.cacheKey(s.question, s.previous, s.version, id)
}

// lookupResult returns the rows cached under s.key when the session is
// still who the key was computed for (want) and its role may read them.
// read is the identity the privilege check read with them (nil when
// nothing was cached, so nothing was asked).
func (s *statement) lookupResult(ctx context.Context, up proxy.Upstream, want identity) (r *resultcache.Result, ok bool, read *identity, err error) {
	r, ok = s.p.cache.GetResult(ctx, s.key)
	if !ok {
		return nil, false, nil, nil
	}
	id, allowed, err := identityAndPrivileges(ctx, up, r.Relations)
	if err != nil {
		return nil, false, nil, err
	}
	s.p.ids.put(s.info.ID, id)
	if id != want {
		return nil, false, &id, nil
	}
	if !allowed {
		s.p.log.DebugContext(ctx, "cached result not served: privileges changed or row security", "relations", r.Relations)
		return nil, false, &id, nil
	}
	return r, true, &id, nil
}

// Execute implements proxy.Statement.
func (s *statement) Execute(ctx context.Context, up proxy.Upstream, w proxy.RowWriter) (string, error) {
	ctx = s.tracer().Begin(ctx)
	// A statement described by this Execute's own message gets its
	// generation deadline in prepare, not the execution's.
	if err := s.prepare(ctx, up); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, s.p.cfg.StatementTimeout+execMargin)
	defer cancel()
	rw := &countingWriter{RowWriter: w}
	tag, err := s.execute(ctx, up, rw)
	s.finish(ctx, err, rw.n, rw.truncated)
	return tag, err
}

// tracer returns the current execution's Tracer, starting one when none
// is running.
func (s *statement) tracer() *Tracer {
	if s.tr == nil {
		s.tr = s.p.Tracer(s.info, s.Kind(), s.question)
		if s.previous != nil {
			s.tr.rec.FollowUpOf = s.previous.RequestID
		}
	}
	return s.tr
}

// finish ends the current execution's trace; the next execution of the
// same prepared statement starts a new one.
func (s *statement) finish(ctx context.Context, err error, rows int64, truncated bool) {
	tr := s.tracer()
	s.tr = nil
	tr.rec.Role, tr.rec.Database, tr.rec.Truncated = s.id.role, s.id.database, truncated
	tr.rec.CacheKey = s.key
	if s.plan != nil {
		tr.rec.Tables, tr.rec.SQL, tr.rec.ExampleID = s.plan.tables, s.plan.sql, s.plan.exampleID
	}
	tr.Finish(ctx, err, rows)
}

// countingWriter counts the rows and the truncation notice the client gets.
type countingWriter struct {
	proxy.RowWriter
	n         int64
	truncated bool
}

func (c *countingWriter) Row(values [][]byte) error {
	c.n++
	return c.RowWriter.Row(values)
}

func (c *countingWriter) Notice(n *pgproto3.NoticeResponse) error {
	if strings.HasPrefix(n.Message, truncatedPrefix) {
		c.truncated = true
	}
	return c.RowWriter.Notice(n)
}

func (s *statement) execute(ctx context.Context, up proxy.Upstream, w proxy.RowWriter) (string, error) {
	p := s.p
	pl := s.plan
	if s.sqlOnly {
		if err := w.Notice(notice(describeTables(pl, s.previous, false))); err != nil {
			return "", err
		}
		if err := w.Row([][]byte{[]byte(pl.sql)}); err != nil {
			return "", err
		}
		return "SELECT 1", nil
	}

	r := s.cached
	s.cached = nil
	idle := up.TxStatus() == 'I'
	t0 := time.Now()
	var sc *scope
	if s.key != "" && idle && s.id != (identity{}) {
		// The key is the session as it is now, at execution, not as it
		// was at Describe: the client may have SET search_path, TimeZone,
		// app.tenant or ROLE since (extended protocol), and rows stored or
		// served must be the ones this identity gets. The identity is read
		// with a round trip that is needed anyway: the cached result's
		// privilege check, or the statement that opens the execution scope.
		if r == nil {
			// A re-executed prepared statement: the cache may answer again.
			r, _ = p.cache.GetResult(ctx, s.key)
		}
		if r != nil {
			id, allowed, err := identityAndPrivileges(ctx, up, r.Relations)
			if err != nil {
				return "", err
			}
			if id != s.id || !allowed {
				r = nil
			}
			s.rekey(id)
		} else {
			var id identity
			var err error
			if sc, id, err = openScopeAs(ctx, up, p.cfg.StatementTimeout); err != nil {
				return "", err
			}
			if id != s.id {
				s.rekey(id)
				if r, _, _, err = s.lookupResult(ctx, up, s.id); err != nil {
					sc.close(ctx)
					return "", err
				}
				if r != nil {
					if err := sc.close(ctx); err != nil {
						return "", err
					}
					sc = nil
				}
			}
		}
		if r != nil {
			s.tr.rec.CacheTier = TierResult
		}
	}
	if r != nil {
		if err := w.Notice(notice(describePlan(pl, s.previous, true))); err != nil {
			return "", err
		}
		for _, row := range r.Rows {
			if err := w.Row(row); err != nil {
				return "", err
			}
		}
		if r.Truncated {
			if err := w.Notice(truncatedNotice(p.cfg.RowLimit)); err != nil {
				return "", err
			}
		}
		return r.CommandTag, nil
	}

	if sc == nil {
		var err error
		if sc, err = openScope(ctx, up, p.cfg.StatementTimeout); err != nil {
			return "", err
		}
	}
	if err := w.Notice(notice(describePlan(pl, s.previous, false))); err != nil {
		sc.close(ctx)
		return "", err
	}
	// One row more than the limit tells a cut result from one that has
	// exactly the limit (the server suspends a portal at maxRows either way).
	cw := &captureWriter{RowWriter: w, capture: s.key != "" && idle, budget: p.cfg.MaxCachedBytes, limit: p.cfg.RowLimit}
	tag, _, err := sc.stream(ctx, pl.sql, p.cfg.RowLimit+1, cw)
	truncated := cw.cut
	var recheck []string
	if err == nil && cw.capture {
		cw.capture, recheck = cacheable(ctx, sc, pl.sql)
	}
	if cerr := sc.close(ctx); cerr != nil && err == nil {
		err = cerr
	}
	s.tr.Stage("execute", time.Since(t0))
	if err != nil {
		return "", err
	}
	if truncated {
		if err := w.Notice(truncatedNotice(p.cfg.RowLimit)); err != nil {
			return "", err
		}
	}
	if tag == "" || truncated {
		tag = fmt.Sprintf("SELECT %d", cw.n)
	}
	if cw.capture {
		p.cache.PutResult(ctx, s.key, &resultcache.Result{
			SQL: pl.sql, Tables: pl.tables, Relations: recheck, Fields: pl.fields,
			Rows: cw.rows, Truncated: truncated, CommandTag: tag,
		})
	}
	return tag, nil
}

// describePlan is the NOTICE before an answer's rows: the tables, where
// the SQL came from when not from the LLM, the turn it followed up, and
// the SQL.
func describePlan(pl *plan, prev *Turn, cached bool) string {
	return describeTables(pl, prev, cached) + "\nSQL: " + pl.sql
}

func describeTables(pl *plan, prev *Turn, cached bool) string {
	var b strings.Builder
	b.WriteString("atrium: tables: ")
	b.WriteString(strings.Join(pl.tables, ", "))
	if pl.exampleID != 0 {
		fmt.Fprintf(&b, " (SQL of example %d, no LLM call)", pl.exampleID)
	}
	if cached {
		b.WriteString(" (cached result)")
	}
	if prev != nil {
		b.WriteString("\nFollow-up of: ")
		b.WriteString(clip(oneLine(prev.Question), 200))
	}
	return b.String()
}

func notice(msg string) *pgproto3.NoticeResponse {
	return &pgproto3.NoticeResponse{Severity: "NOTICE", SeverityUnlocalized: "NOTICE", Code: "00000", Message: msg}
}

// truncatedPrefix starts the notice that says rows were cut.
const truncatedPrefix = "atrium: result cut at "

func truncatedNotice(limit int) *pgproto3.NoticeResponse {
	n := notice(fmt.Sprintf(truncatedPrefix+"%d rows", limit))
	n.Hint = "Ask for fewer rows, or raise --nl-row-limit."
	return n
}

// captureWriter passes rows on and keeps a copy for the cache until the
// copy would exceed budget bytes.
type captureWriter struct {
	proxy.RowWriter
	limit   int // rows past it are dropped and cut set
	cut     bool
	capture bool
	budget  int
	used    int
	n       int
	rows    [][][]byte
}

func (c *captureWriter) Row(values [][]byte) error {
	if c.n >= c.limit {
		c.cut = true
		return nil
	}
	c.n++
	if c.capture {
		size := 0
		for _, v := range values {
			size += len(v) + 4
		}
		c.used += size
		if c.used > c.budget {
			c.capture, c.rows = false, nil
		} else {
			buf := make([]byte, 0, size)
			row := make([][]byte, len(values))
			for i, v := range values {
				if v != nil {
					start := len(buf)
					buf = append(buf, v...)
					row[i] = buf[start:len(buf):len(buf)]
				}
			}
			c.rows = append(c.rows, row)
		}
	}
	return c.RowWriter.Row(values)
}
