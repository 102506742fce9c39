package retriever

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// courtesyPhrases are greetings, thanks, apologies and small talk: what a
// person says to the listener rather than about the data. A clause made
// only of them ("Good morning!", "thanks", "Hi there,", "are you there?")
// names no table, yet its words are content words to the analysis, and
// the vocabulary bridges some of them to schema words (good → full,
// morning → time through "morning time"), so before this a greeting alone
// chose hr.employees on the sample database. The list is general English,
// not drawn from any benchmark; no Spider or Spider-Syn question, training
// or dev, has such a clause.
//
// Greetings open a question and farewells close it; thanks, apologies and
// "please" do either. The distinction keeps data at a question's end: "in
// Honolulu, HI" and "in Tulsa, OK" end with state codes, not greetings.
var courtesyPhrases = func() []courtesyPhrase {
	var out []courtesyPhrase
	for _, g := range []struct {
		open, close bool
		list        string
	}{
		{true, false, `hello|hi|hey|hiya|howdy|greetings|hello there|hi there|hey there|
			good morning|good afternoon|good evening|good day|morning|evening|
			ok|okay|alright|all right|excuse me|pardon me|dear atrium|
			how are you|how are you today|how are you doing|how is it going|how's it going|
			how is everything|how's everything|what's up|
			hope you are well|i hope you are well|hope you're well|i hope you're well`},
		{false, true, `bye|goodbye|see you|cheers|good night`},
		{true, true, `thanks|thank you|thank you very much|thanks a lot|many thanks|thanks again|
			please|kindly|sorry|nice to meet you|are you there|you there|anyone there|atrium`},
	} {
		for _, p := range strings.Split(g.list, "|") {
			if f := strings.Fields(p); len(f) > 0 {
				out = append(out, courtesyPhrase{words: f, open: g.open, close: g.close})
			}
		}
	}
	// Longest first, so "thank you very much" is one phrase, not "thank
	// you" and three leftover words.
	slices.SortStableFunc(out, func(a, b courtesyPhrase) int { return len(b.words) - len(a.words) })
	return out
}()

// courtesyPhrase is one phrase and the end of a question it may stand at.
type courtesyPhrase struct {
	words       []string
	open, close bool
}

// courtesyReason is the abstention reason of a question that was only
// courtesy.
const courtesyReason = "the question is only a greeting or a courtesy; ask about the data"

// stripCourtesy removes the clauses made only of courtesy phrases from
// both ends of a question: "Good morning, which customers placed the most
// orders?" is asked as "which customers placed the most orders?". A clause
// ends at , . ! ? ; or : and keeps its punctuation; clauses in the middle
// stay, and so does any clause with another word in it ("Please show the
// names of …", "Thanks, that was helpful" keeps its second clause). It
// returns "" when every clause is courtesy.
func stripCourtesy(q string) string {
	clauses := splitClauses(q)
	// A run of courtesy clauses at an end goes only when one of them says
	// more than the vocative ("Which atrium is largest? Atrium" keeps it).
	lo, hi := 0, len(clauses)
	for i, said := 0, false; i < hi; i++ {
		ok, s := courtesyClause(clauses[i], true)
		if !ok {
			break
		}
		if said = said || s; said {
			lo = i + 1
		}
	}
	for i, said := hi-1, false; i >= lo; i-- {
		ok, s := courtesyClause(clauses[i], false)
		if !ok {
			break
		}
		if said = said || s; said {
			hi = i
		}
	}
	if lo == 0 && hi == len(clauses) {
		return q
	}
	// The last clause kept may end in the comma that led to a courtesy
	// ("Which orders shipped late, thanks").
	return strings.TrimRight(strings.TrimSpace(strings.Join(clauses[lo:hi], "")), ",;: ")
}

// splitClauses cuts q after each run of clause punctuation; the pieces
// joined give q back. Punctuation inside quotes does not cut: a quoted
// value ("the song 'Hey, Jude'") belongs to its clause.
func splitClauses(q string) []string {
	var out []string
	start := 0
	var quote rune
	prev := rune(0)
	for i := 0; i < len(q); {
		r, size := utf8.DecodeRuneInString(q[i:])
		was := quote
		quote = nextQuote(quote, r, prev)
		if was == 0 && quote == 0 && strings.ContainsRune(",.!?;:", r) {
			end := i + size
			for end < len(q) && strings.IndexByte(",.!?;: ", q[end]) >= 0 {
				end++
			}
			out = append(out, q[start:end])
			start, i, prev = end, end, ' '
			continue
		}
		prev = r
		i += size
	}
	if start < len(q) {
		out = append(out, q[start:])
	}
	return out
}

// courtesyClause reports whether a clause is made only of courtesy
// phrases that may open a question (open) or close it (!open), and
// whether one of them is more than the vocative "atrium", which alone may
// be a word of the data.
func courtesyClause(clause string, open bool) (ok, said bool) {
	words := strings.FieldsFunc(strings.ToLower(clause), func(r rune) bool {
		return !unicode.IsLetter(r) && r != '\''
	})
	if len(words) == 0 {
		return false, false
	}
	for i := 0; i < len(words); {
		n := 0
		for _, p := range courtesyPhrases {
			if (open && p.open || !open && p.close) && len(p.words) <= len(words)-i && slices.Equal(p.words, words[i:i+len(p.words)]) {
				n = len(p.words)
				break
			}
		}
		if n == 0 {
			return false, false
		}
		said = said || n > 1 || words[i] != "atrium"
		i += n
	}
	return true, said
}
