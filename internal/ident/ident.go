// Package ident splits identifiers and free text into lower-case words. It is
// the single definition the catalog (full-text documents, the builtin
// embedder, join inference) and the retriever (question analysis, lite
// scorer features) share: if the two split `custCntry` differently, a
// question word could match a table at index time and not at scoring time.
package ident

import (
	"strings"
	"unicode"
)

// Split splits an identifier or free text into lower-case words:
// snake_case, kebab-case, spaces and punctuation separate words, so do
// lower→upper case changes (camelCase), the end of an upper-case run followed
// by a capitalised word (HTTPServer → http server) and letter↔digit changes
// (address2 → address 2). It is what makes `singer_id`, `SingerID` and
// "singer id" the same words.
func Split(s string) []string {
	var out []string
	rs := []rune(s)
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start {
			out = append(out, strings.ToLower(string(rs[start:end])))
		}
		start = -1
	}
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush(i)
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		p := rs[i-1]
		switch {
		case unicode.IsDigit(r) != unicode.IsDigit(p):
			flush(i)
			start = i
		case unicode.IsUpper(r) && unicode.IsLower(p):
			flush(i)
			start = i
		case unicode.IsLower(r) && unicode.IsUpper(p) && i-1 > start:
			// "HTTPServer": the S starts a new word, so the run ends before it.
			flush(i - 1)
			start = i - 1
		}
	}
	flush(len(rs))
	return out
}

// Words joins Split(s) with spaces.
func Words(s string) string { return strings.Join(Split(s), " ") }
