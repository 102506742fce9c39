package proxy

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// NLKind says what a natural-language statement asks for.
type NLKind int

const (
	// NLQuery asks for rows: retrieve, generate, validate and execute.
	NLQuery NLKind = iota + 1
	// NLSQLOnly asks for the generated SQL only: generate and validate, but do
	// not execute; the answer is one row with the SQL.
	NLSQLOnly
)

func (k NLKind) String() string {
	switch k {
	case NLQuery:
		return "nl"
	case NLSQLOnly:
		return "nl-sql"
	default:
		return "unknown"
	}
}

// NLStatement is a natural-language question found in a statement's text.
type NLStatement struct {
	Kind NLKind
	// Question is the question with surrounding blanks removed and inner runs
	// of white space (including the line breaks of a multi-line block
	// comment) folded to one space. It may be empty: the caller reports that.
	Question string
}

// ParseNL recognises a natural-language statement. It is a pure function of
// its input and never fails: ok is false for anything that is not a question,
// and such text is ordinary SQL to relay.
//
// A question is a statement made only of comments, white space and
// semicolons, in which the first comment whose text starts with "nl:" or
// "nl-sql:" (ignoring case and leading blanks) carries the question:
//
//	/* nl: top five customers by revenue */
//	-- nl: top five customers by revenue
//	/* nl-sql: top five customers by revenue */
//
// Ordinary comments before and after it are allowed, so a BI tool's own
// prefix (Metabase sends "-- Metabase:: userID: 1 ...") does not hide the
// question. Any other token makes the statement ordinary SQL, so
// "/* nl: x */ SELECT 1" runs SELECT 1. Block comments nest, as in
// PostgreSQL's lexer; an unterminated block comment is not a question (the
// server reports the syntax error). psql strips "--" comments before sending,
// which is why the block form exists; drivers send "--" lines as typed.
func ParseNL(sql string) (NLStatement, bool) {
	var (
		found NLStatement
		have  bool
	)
	i := 0
	for i < len(sql) {
		c := sql[i]
		switch {
		case isSQLSpace(c) || c == ';':
			i++
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			end := strings.IndexAny(sql[i+2:], "\n\r")
			var body string
			if end < 0 {
				body, i = sql[i+2:], len(sql)
			} else {
				body, i = sql[i+2:i+2+end], i+2+end+1
			}
			if !have {
				found, have = nlComment(body)
			}
		case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
			body, next, ok := blockComment(sql, i)
			if !ok {
				return NLStatement{}, false
			}
			i = next
			if !have {
				found, have = nlComment(body)
			}
		default:
			return NLStatement{}, false
		}
	}
	return found, have
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
func nlComment(body string) (NLStatement, bool) {
	t := strings.TrimLeftFunc(body, unicode.IsSpace)
	var kind NLKind
	// nl-sql: is tested first: "nl:" is not a prefix of it, but keeping the
	// longer marker first makes adding markers safe.
	switch {
	case hasPrefixFold(t, "nl-sql:"):
		kind, t = NLSQLOnly, t[len("nl-sql:"):]
	case hasPrefixFold(t, "nl:"):
		kind, t = NLQuery, t[len("nl:"):]
	default:
		return NLStatement{}, false
	}
	return NLStatement{Kind: kind, Question: foldSpace(t)}, true
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
