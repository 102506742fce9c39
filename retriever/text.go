package retriever

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/atriumdb/atrium/internal/ident"
)

// This file holds the text analysis the lite scorer and the candidate stage
// share. Training and inference call exactly these functions, so a feature
// means the same thing in both (see train.go).

// stopwords are dropped from questions before matching: they carry no table
// signal and would match every comment.
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again all also am an and any are as at be been
	before being below between both but by can could did do does doing down during each few for from
	further had has have having he her here hers him his how i if in into is it its itself just me
	more most my no nor not now of off on once only or other our out over own same she should so some
	such than that the their theirs them then there these they this those through to too under until
	up very was we were what when where which while who whom why will with would you your yours
	give show list find return tell display get many much please whose every each
	number count total amount value values table tables record records information info data different
	distinct ones one those`) {
		m[w] = true
	}
	return m
}()

// genericWords match column names in almost every table; a hit on one says
// little about which table a question needs.
var genericWords = map[string]bool{"id": true, "name": true, "code": true, "type": true, "key": true}

// stem is a light English stemmer: plural and a few verbal suffixes. Light on
// purpose: table and column names are short and an aggressive stemmer merges
// unrelated names (e.g. "organization" and "organ").
func stem(w string) string {
	n := len(w)
	if n <= 3 {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && n > 4:
		return w[:n-3] + "y"
	case strings.HasSuffix(w, "sses"):
		return w[:n-2]
	case strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes") || strings.HasSuffix(w, "xes"):
		return w[:n-2]
	case strings.HasSuffix(w, "ss") || strings.HasSuffix(w, "us") || strings.HasSuffix(w, "is"):
		// fall through to verbal suffixes below
	case strings.HasSuffix(w, "s"):
		w = w[:n-1]
		n--
	}
	switch {
	case strings.HasSuffix(w, "ing") && n > 5:
		w = w[:n-3]
	case strings.HasSuffix(w, "ed") && n > 4 && !strings.HasSuffix(w, "eed"):
		w = w[:n-2]
	}
	return w
}

// analyzed is a piece of text split into words and stems.
type analyzed struct {
	words []string
	stems []string
	set   map[string]bool // stems
}

func analyze(s string, dropStop bool) analyzed {
	return analyzeWords(ident.Split(s), dropStop, nil)
}

// analyzeWords is analyze over words already split; words at the positions
// skip marks are left out.
func analyzeWords(words []string, dropStop bool, skip map[int]bool) analyzed {
	var a analyzed
	a.set = map[string]bool{}
	for i, w := range words {
		if (dropStop && stopwords[w]) || skip[i] {
			continue
		}
		st := stem(w)
		a.words = append(a.words, w)
		a.stems = append(a.stems, st)
		a.set[st] = true
	}
	return a
}

// thousands matches a number written with a thousands suffix ("100k",
// "$2.5K"), not inside a longer number or word.
var thousands = regexp.MustCompile(`(^|[^\pL\pN.])(\d+(?:\.\d+)?)[kK]\b`)

// durations matches a count with a unit abbreviation run into it, as chat
// writes a duration ("the last 24h", "past 30d", "2wks"); durationUnits
// spells each unit out. A capital D is left alone ("3D printers"), and so
// are m (metres as often as minutes or months: Spider-Syn's "200m") and s
// (decades: "the 1990s").
var (
	durations     = regexp.MustCompile(`(^|[^\pL\pN.])(\d+)(h|hrs?|d|wks?|mos?|yrs?)\b`)
	durationUnits = map[string]string{"h": "hours", "hr": "hours", "hrs": "hours", "d": "days",
		"wk": "weeks", "wks": "weeks", "mo": "months", "mos": "months", "yr": "years", "yrs": "years"}
)

// readMagnitudes writes out the shorthand numbers chat uses, so that a
// question reads as it would spelled out. A thousands suffix becomes the
// number ("earn more than 100k" → "earn more than 100000"): split as
// identifiers are, "100k" is the number 100 and a one-letter word "k", and
// both mislead (100 matches sampled values such as a score out of 100, and
// "k" is a content word that names nothing, so the question's real words
// count for less). A duration gets its unit word ("the last 24h" → "the
// last 24 hours"), which relativeTime then reads as a filter on a date
// column instead of a stray word "h". Only k is read as a magnitude: "m" is
// as often metres as millions. No Spider or Spider-Syn question, training
// or dev, has either form.
func readMagnitudes(text string) string {
	if !strings.ContainsFunc(text, unicode.IsDigit) {
		return text
	}
	return outsideQuotes(text, func(seg string) string {
		return outsideAddresses(seg, readMagnitudesIn)
	})
}

// readMagnitudesIn is readMagnitudes on text with no quote or address.
func readMagnitudesIn(seg string) string {
	if strings.ContainsAny(seg, "kK") {
		seg = thousands.ReplaceAllStringFunc(seg, func(m string) string {
			sub := thousands.FindStringSubmatch(m)
			v, err := strconv.ParseFloat(sub[2], 64)
			if err != nil {
				return m
			}
			return sub[1] + strconv.FormatFloat(v*1000, 'f', -1, 64)
		})
	}
	return durations.ReplaceAllStringFunc(seg, func(m string) string {
		sub := durations.FindStringSubmatch(m)
		return sub[1] + sub[2] + " " + durationUnits[sub[3]]
	})
}

// An e-mail address, a URL or a host name in a question is a value the
// user pasted ("tickets from jonas.fernandez2@example.com"), and so is a
// code: an order or tracking number, a SKU, a course code ("COL0000095028",
// "S1-000078", "ACCT-211"). PostgreSQL's text-search parser keeps an
// address as one lexeme (ts_debug: email, url, host) and a code as one or
// a few (numword, and signed ints: s1, -000078), so the value index holds
// them as the parser read them, and the question's words, split as
// identifiers are and with numbers left out of the value search, can never
// match them. The value search asks for these tokens as the parser reads
// them (see valueLiterals). The patterns admit only letters, digits and
// the separators such a token has, so a literal never needs escaping
// inside tsquery quotes; anything else is left to the word search, as
// before. A host needs a last label of two letters or more, so "e.g." and
// "3.5" are not hosts; a code needs a digit and a letter or a dash, slash,
// underscore or hash, so a plain number is none. Of the 84 Spider training
// questions with such a code, 58 filter on it as a string literal (the
// rest are mostly ordinals and sizes: "5th", "180cm"); no dev question has
// one.
var (
	emailAddress = regexp.MustCompile(`^[A-Za-z0-9_%+-]+(?:\.[A-Za-z0-9_%+-]+)*@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+$`)
	webAddress   = regexp.MustCompile(`^(?:[Hh][Tt][Tt][Pp][Ss]?://)?(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,}(?::[0-9]+)?(?:/[A-Za-z0-9._~/?#=%+-]*)?$`)
	code         = regexp.MustCompile(`^[A-Za-z0-9]+(?:[-_/#][A-Za-z0-9]+)*$`)
)

// maxLiteral is the longest literal looked up: the catalog truncates a
// sampled value to 200 characters (catalog/sample.go).
const maxLiteral = 200

// isAddress reports whether tok is an e-mail address, a URL or a host name.
func isAddress(tok string) bool {
	return strings.ContainsRune(tok, '.') && (emailAddress.MatchString(tok) || webAddress.MatchString(tok))
}

// isCode reports whether tok is a code (see code).
func isCode(tok string) bool {
	return len(tok) >= 3 && strings.ContainsFunc(tok, unicode.IsDigit) &&
		(strings.ContainsFunc(tok, unicode.IsLetter) || strings.ContainsAny(tok, "-_/#")) && code.MatchString(tok)
}

// tokenSpans returns the byte ranges of the tokens of text that keep
// reports true for: each a whitespace-separated token with its surrounding
// quotes and brackets, and a sentence's closing punctuation, trimmed off.
func tokenSpans(text string, keep func(tok string) bool) [][2]int {
	var out [][2]int
	i := 0
	for i < len(text) {
		for i < len(text) && isSpaceByte(text[i]) {
			i++
		}
		start := i
		for i < len(text) && !isSpaceByte(text[i]) {
			i++
		}
		lo, hi := start, i
		for lo < hi && strings.IndexByte("\"'([<", text[lo]) >= 0 {
			lo++
		}
		for hi > lo && strings.IndexByte("\"')]>.,;:!?", text[hi-1]) >= 0 {
			hi--
		}
		if tok := text[lo:hi]; tok != "" && len(tok) <= maxLiteral && keep(tok) {
			out = append(out, [2]int{lo, hi})
		}
	}
	return out
}

func isSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// valueLiterals returns the addresses and codes in text, each once,
// lower-cased as the simple configuration stores them.
func valueLiterals(text string) []string {
	var out []string
	for _, sp := range tokenSpans(text, func(tok string) bool { return isAddress(tok) || isCode(tok) }) {
		if lit := strings.ToLower(text[sp[0]:sp[1]]); !slices.Contains(out, lit) {
			out = append(out, lit)
		}
	}
	return out
}

// isEmail reports whether tok is an e-mail address.
func isEmail(tok string) bool { return strings.ContainsRune(tok, '@') && isAddress(tok) }

// emailsAsWord is text with each e-mail address replaced by the word
// "email", what a query filters on to find it. URLs and hosts stay: a
// host name may be a word of the question ("St.Louis", "node.js").
func emailsAsWord(text string) string {
	return splice(text, tokenSpans(text, isEmail), func(s string) string { return s },
		func(string) string { return " email " })
}

// outsideAddresses applies fn to the parts of text that are no address and
// keeps the addresses as written: "100k@example.com" is a mailbox, not a
// number.
func outsideAddresses(text string, fn func(string) string) string {
	return splice(text, tokenSpans(text, isAddress), fn, func(s string) string { return s })
}

// splice rebuilds text with outside applied to the parts between spans
// and inside to each span.
func splice(text string, spans [][2]int, outside, inside func(string) string) string {
	if len(spans) == 0 {
		return outside(text)
	}
	var b strings.Builder
	start := 0
	for _, sp := range spans {
		b.WriteString(outside(text[start:sp[0]]))
		b.WriteString(inside(text[sp[0]:sp[1]]))
		start = sp[1]
	}
	b.WriteString(outside(text[start:]))
	return b.String()
}

// outsideQuotes applies fn to the parts of text outside quotes and keeps
// quoted parts as written: a quoted value ("the model 'X 100K'") is the
// literal the question means.
func outsideQuotes(text string, fn func(string) string) string {
	var b strings.Builder
	start := 0
	var quote rune
	prev := rune(0)
	for i, r := range text {
		was := quote
		quote = nextQuote(quote, r, prev)
		switch {
		case was == 0 && quote != 0:
			b.WriteString(fn(text[start:i]))
			start = i
		case was != 0 && quote == 0:
			b.WriteString(text[start : i+1])
			start = i + 1
		}
		prev = r
	}
	// What is left is unquoted, or after a quote never closed, which
	// quotes nothing: a stray quote must not hide the rest of a question.
	b.WriteString(fn(text[start:]))
	return b.String()
}

// nextQuote is the quote state after rune r of a question (prev the rune
// before it; 0 outside quotes): " opens a quote, and so does ' unless it
// follows a letter (an apostrophe inside a word, "you're", "customers'",
// opens none); the same character closes it.
func nextQuote(quote, r, prev rune) rune {
	switch {
	case quote != 0:
		if r == quote {
			return 0
		}
		return quote
	case r == '"' || r == '\'' && !unicode.IsLetter(prev):
		return r
	}
	return 0
}

// isNumber reports whether w is all digits.
func isNumber(w string) bool {
	for _, r := range w {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return w != ""
}

// tsqueryTerms returns the question words usable in an OR tsquery: letters
// and digits only, so the text needs no quoting.
func tsqueryTerms(words []string, withNumbers bool) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range words {
		if stopwords[w] || seen[w] || (!withNumbers && isNumber(w)) {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return out
}

// Relative time expressions ("last month", "the past 3 years", "two weeks
// ago", "today") ask for a filter on a date column relative to now; they
// name no table. Their unit word would otherwise count as schema evidence
// for any table whose name, columns or values carry it (a monthly_revenue
// view, a "one month" value) and pull it in.
var (
	timeDeterminers = wordSet(`last this next previous past current coming prior preceding recent`)
	timeUnits       = wordSet(`second seconds minute minutes hour hours day days week weeks weekend weekends
	fortnight fortnights month months quarter quarters year years decade decades`)
	timeCounts  = wordSet(`few couple several one two three four five six seven eight nine ten eleven twelve`)
	timeDeictic = wordSet(`yesterday today tomorrow tonight`)
)

func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// relativeTime marks the positions of words (lower case, as ident.Split
// returns them) that belong to a relative time expression: a determiner,
// an optional count and a unit ("last month", "past 3 years", "next few
// days"), a count and unit followed by "ago", or a deictic day word.
// "last name" is not marked; a column named like the phrase ("the first
// year and last year of parties") is, a cost accepted because schemas
// rarely name a relative time (3 of Spider's 7,000 training questions).
func relativeTime(words []string) map[int]bool {
	var m map[int]bool
	mark := func(from, to int) {
		if m == nil {
			m = map[int]bool{}
		}
		for i := from; i <= to; i++ {
			m[i] = true
		}
	}
	isCount := func(w string) bool { return isNumber(w) || timeCounts[w] }
	for i, w := range words {
		switch {
		case timeDeictic[w]:
			mark(i, i)
		case timeDeterminers[w]:
			j := i + 1
			if j < len(words) && isCount(words[j]) {
				j++
			}
			if j < len(words) && timeUnits[words[j]] {
				mark(i, j)
			}
		case w == "ago" && i > 0 && timeUnits[words[i-1]]:
			from := i - 1
			if from > 0 && isCount(words[from-1]) {
				from--
			}
			mark(from, i)
		}
	}
	return m
}
