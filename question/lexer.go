// Package question is the one layer every question goes through: RETRIEVE,
// /* nl: ... */ (and -- nl: ...) and /* nl-sql: ... */, and the feedback
// that judges them (/* nl-feedback: ... */, feedback.go). It sits below the
// proxy's handler seam (Handler is a proxy.Handler) and owns
//
//   - the one lexer for every question form (Parse);
//   - the asking identity: what the session's role may read is decided on the
//     client's own upstream session before retrieval results reach a prompt,
//     a NOTICE, an error, the cache or the query log (Readable);
//   - one constructor (New) used by atrium serve, the end-to-end tests and
//     the NL benchmark, and one retrieval interface (Retriever);
//   - one account per question: RETRIEVE and nl alike report their stages to
//     one sqlgen.Tracer, whose record (Options.OnQuestion) is the only
//     source of the query log and of the retrieval and LLM metrics.
//
// Generation, validation and execution helpers stay in sqlgen; the catalog
// retriever stays in retriever.
//
// # Lifetime: one context per question phase
//
// Every blocking call of a question runs under a context derived from the
// one the proxy passes to Describe and Execute: the session's context,
// cancelled when the client sends a CancelRequest, when its socket reaches
// EOF while the question runs, and at shutdown. Nothing a question does
// starts from context.Background. On top of it each phase has one deadline:
//
//   - generation (Describe, or Execute of a statement not yet described):
//     the cache look-ups, the identity read, retrieval, the privilege check,
//     sample rows, every LLM call (the LLM client's own per-call timeout
//     nests inside) and validation share sqlgen.Config.GenerateTimeout;
//     a session waiting on another session's identical generation waits
//     under its own deadline. RETRIEVE is a generation phase without the
//     LLM and has the same deadline.
//   - execution (Execute): StatementTimeout plus a 5 s margin for the few
//     statements Atrium adds (scope, identity, privilege and cacheability
//     reads). The generated SQL itself runs under SET LOCAL
//     statement_timeout = StatementTimeout, so the server's own 57014 is
//     what a slow query normally reports.
//   - each result-cache call: one second of its own inside the phase's
//     deadline. Reads stop with the question; writes (after the client has
//     its rows) keep only the question's values, so a client that hangs up
//     at once does not cut them short, and the second still bounds them.
//   - closing the read-only scope, which must put the client's session back
//     even after the phase's context ended: ten seconds, detached from
//     cancellation.
//
// A prepared question keeps no context between messages: Describe's
// generation deadline ends with Describe, and each later Execute of the
// same statement (perhaps minutes later, after a SET) starts a fresh
// execution deadline from its own message's context and re-reads the
// session's identity under it. An Execute whose Describe failed, or that
// comes without one, first generates under a fresh generation deadline,
// then executes under a fresh execution deadline: the phases never share
// or extend one another's budget.
package question

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Form says which question form a statement is.
type Form int

const (
	// Retrieve asks for the tables retrieval chooses (RETRIEVE <question>).
	Retrieve Form = iota + 1
	// NL asks for rows: retrieve, generate, validate and execute
	// (/* nl: ... */ or -- nl: ...).
	NL
	// NLSQL asks for the generated SQL only: generate and validate, but do
	// not execute; the answer is one row with the SQL (/* nl-sql: ... */).
	NLSQL
	// Feedback judges the session's last question (/* nl-feedback: good */,
	// /* nl-feedback: wrong — <hint or corrected SQL> */); see
	// ParseVerdict.
	Feedback
)

// String is the marker of the form as a client writes it.
func (f Form) String() string {
	switch f {
	case Retrieve:
		return "retrieve"
	case NL:
		return "nl"
	case NLSQL:
		return "nl-sql"
	case Feedback:
		return "nl-feedback"
	default:
		return "unknown"
	}
}

// Question is a question found in a statement's text.
type Question struct {
	Form Form
	// Text is the question with surrounding blanks removed. For nl and
	// nl-sql, inner runs of white space (including the line breaks of a
	// multi-line block comment) are folded to one space; for nl-feedback it
	// is kept as written, only trimmed. It may be empty: the caller reports
	// that.
	Text string
	// Fresh marks /* nl-new: ... */: an nl question asked without the
	// session's previous turn, which starts a new conversation.
	Fresh bool
	// More is the text of the statements that follow the question in the
	// same query string, after its semicolon: anything after a RETRIEVE's,
	// and from a second question marker on after a comment question's
	// (other comments there are only comments). The caller refuses it.
	More string
}

// Parse recognises every question form; it is the only lexer for them. It
// is a pure function of its input and never fails: ok is false for
// anything that is not a question, and such text is ordinary SQL to relay.
// See parseNL and parseRetrieve for the two grammars.
func Parse(sql string) (Question, bool) {
	if q, more, ok := parseRetrieve(sql); ok {
		return Question{Form: Retrieve, Text: q, More: more}, true
	}
	return parseNL(sql)
}

// parseNL recognises a natural-language statement.
//
// A question is a statement made only of comments, white space and
// semicolons, in which the first comment whose text starts with "nl:" or
// "nl-sql:" (ignoring case and leading blanks) carries the question:
//
//	/* nl: top five customers by revenue */
//	-- nl: top five customers by revenue
//	/* nl-sql: top five customers by revenue */
//	/* nl-new: top five customers by revenue */
//
// nl-new is an nl question that starts a new conversation: it is never
// read as a follow-up of the session's previous question (Question.Fresh).
//
// Ordinary comments before and after it are allowed, so a BI tool's own
// prefix (Metabase sends "-- Metabase:: userID: 1 ...") does not hide the
// question. Any other token makes the statement ordinary SQL, so
// "/* nl: x */ SELECT 1" runs SELECT 1. A question marker after a semicolon
// that follows the question starts a second statement (Question.More),
// which the caller refuses; two markers in one statement mean the first.
// Block comments nest, as in PostgreSQL's lexer; an unterminated block
// comment is not a question (the server reports the syntax error). psql
// strips "--" comments before sending, which is why the block form exists;
// drivers send "--" lines as typed.
func parseNL(sql string) (Question, bool) {
	var (
		found Question
		have  bool
		// ended: a semicolon followed the question; a marker after it
		// is a second question in the query string (Question.More).
		ended  bool
		moreAt = -1
	)
	seen := func(body string, at int) {
		switch {
		case !have:
			found, have = nlComment(body)
		case ended && moreAt < 0:
			if _, ok := nlComment(body); ok {
				moreAt = at
			}
		}
	}
	i := 0
	for i < len(sql) {
		c := sql[i]
		switch {
		case isSQLSpace(c):
			i++
		case c == ';':
			ended = ended || have
			i++
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			at := i
			end := strings.IndexAny(sql[i+2:], "\n\r")
			var body string
			if end < 0 {
				body, i = sql[i+2:], len(sql)
			} else {
				body, i = sql[i+2:i+2+end], i+2+end+1
			}
			seen(body, at)
		case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
			at := i
			body, next, ok := blockComment(sql, i)
			if !ok {
				return Question{}, false
			}
			i = next
			seen(body, at)
		default:
			return Question{}, false
		}
	}
	if have && moreAt >= 0 {
		found.More = strings.TrimSpace(sql[moreAt:])
	}
	return found, have
}

// parseRetrieve recognises `RETRIEVE <question>`: the keyword (any case)
// after optional white space and ordinary comments, then the question up to
// the end, a trailing semicolon dropped. The question may be written as a
// single-quoted string literal. ok is false for anything else, which is
// ordinary SQL. The question may be empty; the caller reports it.
//
// A semicolon ends a statement, as everywhere else in a query string: text
// after one (other than blanks, comments and more semicolons) is a second
// statement, returned as more. psql splits "RETRIEVE a; RETRIEVE b" itself;
// a driver sending both in one simple Query must not get one question
// "a; RETRIEVE b". Inside the quoted form a semicolon is the question's.
func parseRetrieve(sql string) (question, more string, ok bool) {
	i := skipSpaceAndComments(sql)
	const kw = "retrieve"
	if len(sql)-i < len(kw) || !strings.EqualFold(sql[i:i+len(kw)], kw) {
		return "", "", false
	}
	rest := sql[i+len(kw):]
	if rest != "" && !isSQLSpace(rest[0]) {
		return "", "", false // e.g. RETRIEVED, retrieve_all(...)
	}
	rest = strings.TrimSpace(rest)
	end := statementEnd(rest)
	rest, more = strings.TrimSpace(rest[:end]), statementsAfter(rest[end:])
	if len(rest) >= 2 && rest[0] == '\'' && rest[len(rest)-1] == '\'' {
		if inner := rest[1 : len(rest)-1]; !strings.Contains(strings.ReplaceAll(inner, "''", ""), "'") {
			rest = strings.ReplaceAll(inner, "''", "'")
		}
	}
	return strings.TrimSpace(rest), more, true
}

// statementEnd is the offset of the semicolon that ends a RETRIEVE's
// question, or len(s). A question that opens with a quote is a string
// literal up to its closing quote (a quote doubled inside is one); an
// unquoted one may hold apostrophes ("the singers' ages"), so quotes mean
// nothing in it.
func statementEnd(s string) int {
	i := 0
	if strings.HasPrefix(s, "'") {
		for i = 1; i < len(s); i++ {
			if s[i] != '\'' {
				continue
			}
			if i+1 < len(s) && s[i+1] == '\'' {
				i++
				continue
			}
			i++
			break
		}
	}
	if j := strings.IndexByte(s[i:], ';'); j >= 0 {
		return i + j
	}
	return len(s)
}

// statementsAfter is what follows a statement's terminating semicolon,
// trimmed; empty when only blanks, comments and semicolons follow.
func statementsAfter(s string) string {
	for {
		s = strings.TrimLeft(s, ";")
		i := skipSpaceAndComments(s)
		if i == len(s) {
			return ""
		}
		if s[i] != ';' {
			return strings.TrimSpace(s[i:])
		}
		s = s[i:]
	}
}

// skipSpaceAndComments returns the offset of the first byte that is not
// white space or part of a comment (block comments nest, as in PostgreSQL).
// An unterminated block comment swallows the rest.
func skipSpaceAndComments(s string) int {
	i := 0
	for i < len(s) {
		switch {
		case isSQLSpace(s[i]):
			i++
		case strings.HasPrefix(s[i:], "--"):
			j := strings.IndexAny(s[i:], "\r\n")
			if j < 0 {
				return len(s)
			}
			i += j + 1
		case strings.HasPrefix(s[i:], "/*"):
			_, next, ok := blockComment(s, i)
			if !ok {
				return len(s)
			}
			i = next
		default:
			return i
		}
	}
	return i
}

// blockComment returns the text inside the block comment starting at
// sql[start] ("/*"), the index just past it, and whether it is terminated.
// Nesting follows PostgreSQL's scanner (xc state): "/*" opens, "*/" closes.
func blockComment(sql string, start int) (body string, next int, ok bool) {
	depth := 0
	i := start
	for i+1 < len(sql) {
		switch {
		case sql[i] == '/' && sql[i+1] == '*':
			depth++
			i += 2
		case sql[i] == '*' && sql[i+1] == '/':
			depth--
			i += 2
			if depth == 0 {
				return sql[start+2 : i-2], i, true
			}
		default:
			i++
		}
	}
	return "", len(sql), false
}

// nlComment reports whether a comment's text is a question marker and
// extracts the question.
func nlComment(body string) (Question, bool) {
	t := strings.TrimLeftFunc(body, unicode.IsSpace)
	var kind Form
	// nl-sql: is tested first: "nl:" is not a prefix of it, but keeping the
	// longer marker first makes adding markers safe.
	fresh := false
	switch {
	case hasPrefixFold(t, "nl-feedback:"):
		// Kept as written, not folded: a corrected SQL's literals and line
		// comments must reach the parser intact.
		return Question{Form: Feedback, Text: strings.TrimSpace(t[len("nl-feedback:"):])}, true
	case hasPrefixFold(t, "nl-sql:"):
		kind, t = NLSQL, t[len("nl-sql:"):]
	case hasPrefixFold(t, "nl-new:"):
		kind, t, fresh = NL, t[len("nl-new:"):], true
	case hasPrefixFold(t, "nl:"):
		kind, t = NL, t[len("nl:"):]
	default:
		return Question{}, false
	}
	return Question{Form: kind, Text: foldSpace(t), Fresh: fresh}, true
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// foldSpace trims s and folds each run of white space to one space. Invalid
// UTF-8 is kept byte for byte: the question is the client's text, and the
// server, not the parser, decides whether it is acceptable.
func foldSpace(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r != utf8.RuneError && unicode.IsSpace(r) {
			space = true
			i += n
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteString(s[i : i+n])
		i += n
	}
	return b.String()
}

// isSQLSpace matches PostgreSQL's scanner's notion of white space
// (scan.l: space [ \t\n\r\f\v]).
func isSQLSpace(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\f', '\v':
		return true
	}
	return false
}
