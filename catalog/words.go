package catalog

import (
	"strings"
	"unicode"
)

// SplitWords splits an identifier or free text into lower-case words:
// snake_case, kebab-case, spaces and punctuation separate words, so do
// lower→upper case changes (camelCase), the end of an upper-case run followed
// by a capitalised word (HTTPServer → http server) and letter↔digit changes
// (address2 → address 2). It is what makes `singer_id`, `SingerID` and
// "singer id" the same words for full-text search and the builtin embedder.
func SplitWords(s string) []string {
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

// NameWords joins SplitWords(s) with spaces.
func NameWords(s string) string { return strings.Join(SplitWords(s), " ") }

// truncateRunes cuts s to at most n runes, never inside a UTF-8 sequence.
func truncateRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}
