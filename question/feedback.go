package question

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgproto3"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/atriumdb/atrium/internal/telemetry"
	"github.com/atriumdb/atrium/proxy"
	"github.com/atriumdb/atrium/sqlgen"
)

// Feedback: right after a question, a user says whether its answer was
// right, in the same session:
//
//	/* nl-feedback: good */
//	/* nl-feedback: wrong — the total must use net_amount */
//	/* nl-feedback: wrong — SELECT sum(net_amount) FROM shop.orders */
//
// The verdict judges the session's last turn (sessions, Turn) and becomes
// one atrium.feedback row in the catalog database, written synchronously so
// the user sees it landed. A good answer with SQL, or a corrected SQL that
// passes the checks generated SQL passes (on the client's session, with its
// privileges), is a candidate example; a curator (FeedbackConfig) has it
// promoted at once. A wrong verdict evicts the judged answer from the
// result cache. See docs/learning.md, "Feedback".

// Verdict is what feedback says of an answer.
type Verdict string

// Verdicts, as atrium.feedback.verdict stores them.
const (
	VerdictGood  Verdict = "good"
	VerdictWrong Verdict = "wrong"
)

// Feedback's SQLSTATEs.
const (
	// CodeBadFeedback (22023 invalid_parameter_value): the text after
	// nl-feedback: is neither good nor wrong [— text].
	CodeBadFeedback = "22023"
	// CodeNoTurn (55000 object_not_in_prerequisite_state): the session has
	// asked no question to judge, or feedback is not configured.
	CodeNoTurn = "55000"
	// CodeFeedbackStore (58000 system_error): the catalog database did not
	// take the feedback.
	CodeFeedbackStore = "58000"
)

const feedbackForms = "Write /* nl-feedback: good */ or /* nl-feedback: wrong — <what was wrong, or the corrected SQL> */ right after the question."

// ParseVerdict reads the text after "nl-feedback:": "good", or "wrong"
// alone or followed by a separator (an em dash, an en dash, "-", ":" or
// only white space) and a hint or a corrected SQL, which it returns
// trimmed. The verdict's case is ignored. Anything else is a *proxy.Error
// with SQLSTATE 22023 whose hint shows both forms.
func ParseVerdict(text string) (Verdict, string, error) {
	t := strings.TrimSpace(text)
	if strings.EqualFold(t, string(VerdictGood)) {
		return VerdictGood, "", nil
	}
	if hasPrefixFold(t, string(VerdictWrong)) {
		rest := t[len(VerdictWrong):]
		if rest == "" {
			return VerdictWrong, "", nil
		}
		r, n := utf8.DecodeRuneInString(rest)
		if unicode.IsSpace(r) || isSeparator(r) {
			rest = strings.TrimLeftFunc(rest, unicode.IsSpace)
			if r, n = utf8.DecodeRuneInString(rest); isSeparator(r) {
				rest = rest[n:]
			}
			return VerdictWrong, strings.TrimSpace(rest), nil
		}
	}
	shown := t
	if len(shown) > 60 {
		shown = shown[:60] + "..."
	}
	return "", "", &proxy.Error{Code: CodeBadFeedback,
		Message: fmt.Sprintf("nl-feedback: %q is not a verdict (good, or wrong with an optional hint or corrected SQL)", shown),
		Hint:    feedbackForms}
}

func isSeparator(r rune) bool {
	switch r {
	case '—', '–', '-', ':':
		return true
	}
	return false
}

// FeedbackRecord is one atrium.feedback row.
type FeedbackRecord struct {
	// RequestID is the judged question's (atrium.query_log.request_id).
	RequestID       string
	Database        string
	Role            string // the session's current_user when it gave the feedback
	ApplicationName string
	Question        string
	// SQL is the judged answer's SQL; "" (NULL) when it had none.
	SQL string
	// Tables: for a candidate, the relations its SQL reads, resolved on
	// the session (schema.table); otherwise the judged question's chosen
	// tables.
	Tables  []string
	Verdict Verdict
	// Hint and CorrectedSQL: at most one is set, for a wrong verdict.
	Hint, CorrectedSQL string
	Candidate          bool
}

// FeedbackStore records feedback where curators read it (atrium.feedback
// in the catalog database; FeedbackDB) and promotes a candidate. Calls are
// synchronous and bounded by ctx.
type FeedbackStore interface {
	// RecordFeedback inserts r and returns the row's id.
	RecordFeedback(ctx context.Context, r FeedbackRecord) (int64, error)
	// PromoteFeedback runs atrium.promote_feedback(id) and returns the
	// example's id.
	PromoteFeedback(ctx context.Context, id int64) (int64, error)
	// DisableExamples disables the examples promoted from feedback on
	// the question requestID and the example exampleID (0: none), and
	// returns the ids it disabled.
	DisableExamples(ctx context.Context, requestID string, exampleID int64) ([]int64, error)
}

// CacheDeleter is what feedback needs of the result cache to evict an
// answer marked wrong (*resultcache.Cache): delete a key's entries in every
// tier and say how many there were.
type CacheDeleter interface {
	Delete(ctx context.Context, key string) (int, error)
}

// FeedbackConfig holds feedback's settings.
type FeedbackConfig struct {
	// CuratorRole, when set, is the role whose members' candidates are
	// promoted to atrium.examples at once (atrium serve --nl-curator-role).
	// Membership is pg_has_role(current_user, CuratorRole, 'MEMBER') on
	// the client's own session. Default "": nothing is promoted
	// automatically.
	CuratorRole string
	// Timeout bounds one feedback: reading the session's role, validating
	// a corrected SQL, recording, promoting and evicting. Default 30s.
	Timeout time.Duration
}

func (c FeedbackConfig) withDefaults() FeedbackConfig {
	if c.Timeout <= 0 {
		c.Timeout = 30 * time.Second
	}
	return c
}

// feedback is the Handler's feedback side.
type feedback struct {
	cfg   FeedbackConfig
	store FeedbackStore // nil: feedback is refused with 55000
	cache CacheDeleter  // nil: nothing to evict
}

// FeedbackFields is the row description of a feedback's answer.
func FeedbackFields() []pgproto3.FieldDescription {
	f := func(name string, oid uint32, size int16) pgproto3.FieldDescription {
		return pgproto3.FieldDescription{Name: []byte(name), DataTypeOID: oid, DataTypeSize: size, TypeModifier: -1}
	}
	return []pgproto3.FieldDescription{
		f("feedback_id", oidInt8, 8), f("verdict", oidText, -1), f("candidate", oidBool, 1),
		f("example_id", oidInt8, 8), f("evicted", oidBool, 1),
	}
}

const oidInt8 = 20

// feedbackStatement records one verdict on its session's last turn.
type feedbackStatement struct {
	h       *Handler
	info    proxy.SessionInfo
	verdict Verdict
	text    string // after "wrong": a hint or a corrected SQL
}

var (
	_ proxy.Statement = (*feedbackStatement)(nil)
	_ proxy.Kinded    = (*feedbackStatement)(nil)
)

// Kind implements proxy.Kinded.
func (s *feedbackStatement) Kind() string { return "feedback" }

// Describe implements proxy.Statement.
func (s *feedbackStatement) Describe(context.Context, proxy.Upstream) ([]pgproto3.FieldDescription, error) {
	return FeedbackFields(), nil
}

// feedbackOutcome is what one feedback did, for the reply and the log.
type feedbackOutcome struct {
	id        int64
	candidate bool
	exampleID int64 // 0: not promoted
	evicted   bool
	disabled  []int64  // examples a curator's "wrong" disabled
	notes     []string // said in the NOTICE
}

// Execute implements proxy.Statement. Each execution records one row:
// feedback is an act, not a query, so a prepared feedback executed twice
// is recorded twice.
func (s *feedbackStatement) Execute(ctx context.Context, up proxy.Upstream, w proxy.RowWriter) (string, error) {
	fb := s.h.fb
	if fb.store == nil {
		return "", &proxy.Error{Code: CodeNoTurn, Message: "nl-feedback: feedback is not recorded by this Atrium instance",
			Hint: "Feedback is written to atrium.feedback in the catalog database; start atrium serve with --catalog-dsn."}
	}
	turn, ok := s.h.turns.get(s.info.ID)
	if !ok {
		return "", &proxy.Error{Code: CodeNoTurn, Message: "nl-feedback: no question in this session to give feedback on",
			Hint: "Feedback judges the last question asked on the same connection: ask with /* nl: ... */ first. " + feedbackForms}
	}
	if up == nil {
		return "", &proxy.Error{Code: CodeNoTurn, Message: "nl-feedback: feedback needs the client's session"}
	}
	if up.TxStatus() == 'E' {
		return "", &proxy.Error{Code: sqlgen.CodeInFailedTx, Message: "current transaction is aborted, commands ignored until end of transaction block",
			Hint: "ROLLBACK the transaction before giving feedback."}
	}
	ctx = telemetry.WithRequestID(ctx, turn.RequestID)
	ctx, cancel := context.WithTimeout(ctx, fb.cfg.Timeout)
	defer cancel()
	out, err := s.record(ctx, up, turn)
	if err != nil {
		return "", err
	}
	if err := w.Notice(feedbackNotice(s.verdict, out)); err != nil {
		return "", err
	}
	row := [][]byte{
		[]byte(strconv.FormatInt(out.id, 10)), []byte(s.verdict), boolText(out.candidate), nil, boolText(out.evicted),
	}
	if out.exampleID != 0 {
		row[3] = []byte(strconv.FormatInt(out.exampleID, 10))
	}
	if err := w.Row(row); err != nil {
		return "", err
	}
	return "SELECT 1", nil
}

func boolText(b bool) []byte {
	if b {
		return []byte("t")
	}
	return []byte("f")
}

// record validates, records, promotes and evicts.
func (s *feedbackStatement) record(ctx context.Context, up proxy.Upstream, turn Turn) (feedbackOutcome, error) {
	h, fb := s.h, s.h.fb
	var out feedbackOutcome
	role, curator, err := sessionRole(ctx, up, fb.cfg.CuratorRole)
	if err != nil {
		return out, err
	}
	db := turn.Database
	if db == "" {
		db = s.info.Database
	}
	rec := FeedbackRecord{
		RequestID: turn.RequestID, Database: db, Role: role, ApplicationName: s.info.ApplicationName,
		Question: turn.Question, SQL: turn.SQL, Tables: turn.Tables, Verdict: s.verdict,
	}
	if !turn.OK() {
		rec.SQL = "" // SQL of a failed question did not answer it
	}
	timeout := h.nl.Config().StatementTimeout
	switch {
	case s.verdict == VerdictGood && (!turn.OK() || turn.SQL == ""):
		// A failed question, or RETRIEVE: the verdict is kept, but there is
		// no SQL to learn from.
		if !turn.OK() {
			out.notes = append(out.notes, "the question ended with SQLSTATE "+turn.SQLState+", so there is no answer to make an example of")
		} else {
			out.notes = append(out.notes, "the question was answered without SQL, so there is no example to make")
		}
	case s.verdict == VerdictGood:
		// The answer is checked again as the role vouching for it now, and
		// its tables are taken from what the SQL reads.
		v, err := sqlgen.ValidateOnSession(ctx, up, turn.SQL, timeout)
		if err != nil {
			if ctx.Err() != nil {
				return out, ctx.Err()
			}
			out.notes = append(out.notes, "its SQL no longer validates in this session ("+errText(err)+"), so it is not a candidate")
			break
		}
		rec.Tables, rec.Candidate = v.Tables, true
	case s.text == "":
	case isSQL(s.text):
		v, err := sqlgen.ValidateOnSession(ctx, up, s.text, timeout)
		if err != nil {
			return out, correctedRefused(err)
		}
		rec.CorrectedSQL, rec.Tables, rec.Candidate = v.SQL, v.Tables, true
	default:
		rec.Hint = s.text
	}

	id, err := fb.store.RecordFeedback(ctx, rec)
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return out, &proxy.Error{Code: sqlgen.CodeTimeout, Message: "nl-feedback: the catalog database did not record the feedback in time", Err: err}
		}
		return out, &proxy.Error{Code: CodeFeedbackStore, Message: "nl-feedback: the feedback could not be recorded in the catalog database",
			Hint: "Nothing was recorded; send it again. The Atrium log says why.", Err: err}
	}
	out.id, out.candidate = id, rec.Candidate
	log := h.log.With("feedback_id", id, "verdict", string(s.verdict), "candidate", rec.Candidate, "role", role)

	if rec.Candidate && curator {
		ex, err := fb.store.PromoteFeedback(ctx, id)
		if err != nil {
			log.WarnContext(ctx, "feedback recorded but not promoted", "err", err)
			out.notes = append(out.notes, "automatic promotion failed; promote with SELECT atrium.promote_feedback("+strconv.FormatInt(id, 10)+")")
		} else {
			out.exampleID = ex
		}
	}
	if s.verdict == VerdictWrong {
		// An example behind the wrong answer would serve it again without
		// the LLM. A curator's verdict disables it; anyone else's is a
		// note for curators, so one user cannot switch examples off.
		switch {
		case curator:
			ids, err := fb.store.DisableExamples(ctx, turn.RequestID, turn.ExampleID)
			if err != nil {
				log.WarnContext(ctx, "examples behind a wrong answer not disabled", "err", err)
				out.notes = append(out.notes, "the examples behind this answer could not be disabled; see atrium examples list")
			}
			out.disabled = ids
		case turn.ExampleID != 0:
			out.notes = append(out.notes, fmt.Sprintf("the answer was example %d's SQL; a curator can disable it with atrium examples disable %d", turn.ExampleID, turn.ExampleID))
		}
	}
	if s.verdict == VerdictWrong && turn.CacheKey != "" && fb.cache != nil {
		n, err := fb.cache.Delete(ctx, turn.CacheKey)
		if err != nil {
			log.WarnContext(ctx, "answer marked wrong not evicted from the result cache", "err", err)
			out.notes = append(out.notes, "the cached answer could not be evicted now; it expires with the catalog's learning version")
		}
		out.evicted = n > 0
	}
	log.InfoContext(ctx, "feedback recorded", "question", turn.Question, "example_id", out.exampleID,
		"evicted", out.evicted, "hint", rec.Hint != "", "corrected_sql", rec.CorrectedSQL != "")
	return out, nil
}

// isSQL says whether the text after "wrong" is SQL (a corrected query)
// rather than words: whether PostgreSQL's parser reads at least one
// statement from it. Words that happen to parse ("analyze orders") are
// SQL, and refused as not a SELECT.
func isSQL(text string) bool {
	res, err := pg_query.Parse(text)
	return err == nil && len(res.GetStmts()) > 0
}

// correctedRefused reports a corrected SQL that did not validate, with the
// validation's SQLSTATE: nothing is recorded, so the user can fix the SQL
// and send the feedback again.
func correctedRefused(err error) error {
	hint := "Nothing was recorded. Fix the SQL and send the feedback again, or describe what was wrong in words."
	var pe *proxy.Error
	if errors.As(err, &pe) {
		return &proxy.Error{Code: pe.Code, Message: "nl-feedback: corrected SQL refused: " + pe.Message, Detail: pe.Detail, Hint: hint, Err: err}
	}
	var ue *proxy.UpstreamError
	if errors.As(err, &ue) {
		return &proxy.Error{Code: ue.Code, Message: "nl-feedback: corrected SQL refused: " + ue.Message, Detail: ue.Detail, Hint: hint, Err: err}
	}
	return err
}

// errText is an error's client-facing text (its message, without causes).
func errText(err error) string {
	var pe *proxy.Error
	if errors.As(err, &pe) {
		return pe.Message
	}
	var ue *proxy.UpstreamError
	if errors.As(err, &ue) {
		return ue.Message
	}
	return "internal error"
}

// curatorSQL reads the session's current_user and whether it is a member
// of the curator role ($1). pg_has_role is given the role's oid, found by
// name, so a curator role that does not exist is "not a member", not an
// error that would abort the client's transaction.
const curatorSQL = `SELECT current_user, coalesce((SELECT pg_catalog.pg_has_role(current_user, r.oid, 'MEMBER')
  FROM pg_catalog.pg_roles r WHERE r.rolname = $1), false)`

// sessionRole asks the client's own session who it is now and whether it
// curates (always false when curatorRole is "").
func sessionRole(ctx context.Context, up proxy.Upstream, curatorRole string) (string, bool, error) {
	var rows textRows
	if _, _, err := up.Stream(ctx, curatorSQL, 0, &rows, []byte(curatorRole)); err != nil {
		return "", false, err
	}
	if len(rows) != 1 || len(rows[0]) != 2 {
		return "", false, &proxy.Error{Code: sqlgen.CodeInternal, Message: "nl-feedback: unexpected answer to the session role query"}
	}
	return string(rows[0][0]), curatorRole != "" && string(rows[0][1]) == "t", nil
}

// feedbackNotice says what happened and what a curator can do next.
func feedbackNotice(v Verdict, out feedbackOutcome) *pgproto3.NoticeResponse {
	var b strings.Builder
	fmt.Fprintf(&b, "atrium: feedback %d (%s) recorded", out.id, v)
	switch {
	case out.exampleID != 0:
		fmt.Fprintf(&b, "; promoted to example %d", out.exampleID)
	case out.candidate:
		fmt.Fprintf(&b, "; promote with SELECT atrium.promote_feedback(%d) or atrium examples promote --dsn ... %d", out.id, out.id)
	default:
		b.WriteString("; not a candidate example")
	}
	if out.evicted {
		b.WriteString("; the cached answer was evicted")
	}
	for _, id := range out.disabled {
		fmt.Fprintf(&b, "; example %d disabled", id)
	}
	n := &pgproto3.NoticeResponse{Severity: "NOTICE", SeverityUnlocalized: "NOTICE", Code: "00000", Message: b.String()}
	if len(out.notes) > 0 {
		n.Detail = strings.Join(out.notes, "\n")
	}
	return n
}
