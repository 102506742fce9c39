package question

import (
	"strings"
	"unicode"
)

// Follow-ups
//
// Within one session a question continues the previous turn when that turn
// was answered with tables and the question reads as a continuation rather
// than a question of its own. FollowUp decides from the words alone, with
// three rules any of which suffices, so that every decision can be
// explained by the rule that made it:
//
//   - cue: it starts with a continuation word or phrase ("and", "but",
//     "only", "what about", "how about", "now", "also", "same", "instead",
//     "then", "just", "except");
//   - reference: it points back at the previous answer: "those", "these",
//     "them", "ones" anywhere, or "that"/"it" as the first word or right
//     after a verb or preposition ("break that down", "sort it by") — not
//     "customers that ordered", where "that" starts a relative clause;
//   - fragment: it is short (at most three content words) and starts with a
//     preposition, a time word, a ranking word or a number ("by month?",
//     "in Lisbon", "last year?", "top 5", "2023?"), so it has no subject of
//     its own and must borrow the previous one. A short question that starts
//     with its own subject or a question word ("How many employees?",
//     "orders placed today") may name new tables and stands alone.
//
// Anything else is a new topic and is asked without context, so it never
// drags the previous turn's tables in. A user starts fresh explicitly with
// /* nl-new: ... */, and a session's memory is cleared by DISCARD ALL or
// RESET ALL (what connection poolers send between clients).

// Follow-up reasons, as FollowUp reports them.
const (
	FollowCue       = "cue"
	FollowReference = "reference"
	FollowFragment  = "fragment"
)

// fragmentMaxWords is the most content words a subject-less fragment may
// have to count as a follow-up. Three keeps "top 5 customers by revenue"
// (four) a question of its own while "last year", "by month and country"
// and "in Lisbon or Porto" follow up.
const fragmentMaxWords = 3

var (
	// cuePhrases start a continuation; each is a sequence of words.
	cuePhrases = [][]string{
		{"and"}, {"but"}, {"only"}, {"what", "about"}, {"how", "about"}, {"now"}, {"also"},
		{"same"}, {"instead"}, {"then"}, {"just"}, {"except"}, {"what", "if"},
	}
	// referenceWords point back at the previous answer wherever they are.
	referenceWords = setOfWords("those these them ones")
	// weakReferences point back only as the first word or after one of
	// referenceLeads: elsewhere "that" starts a relative clause and "it"
	// may be the question's own subject.
	weakReferences = setOfWords("that it")
	referenceLeads = setOfWords(`show list give break split sort order group rank filter limit repeat redo do
		make count sum average plot chart compare of for in from with than to by about on`)
	// fragmentStarts begin a phrase with no subject of its own.
	fragmentStarts = setOfWords(`by per for in from over during since before after between within with without
		excluding including except at on under above below last this next previous past current
		today yesterday tomorrow top bottom first latest earliest highest lowest biggest smallest
		most least fewer more less sorted ordered grouped descending ascending desc asc each every
		monthly weekly daily yearly quarterly annually`)
	// stopWords are not content words when counting a fragment's length.
	stopWords = setOfWords(`a an the of to in on at by for per from with and or but is are was were be been
		do does did me my our us we you your i please show list give what which who how many much
		there their its it this that these those them ones one than as all any some`)
)

func setOfWords(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// questionWords splits a question into lower-case words of letters and
// digits; everything else separates them.
func questionWords(q string) []string {
	return strings.FieldsFunc(strings.ToLower(q), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\''
	})
}

// FollowUp reports whether question continues a previous question, and by
// which rule (FollowCue, FollowReference, FollowFragment). The caller
// checks that there is a previous turn with tables.
func FollowUp(question string) (reason string, ok bool) {
	words := questionWords(question)
	if len(words) == 0 {
		return "", false
	}
	for _, cue := range cuePhrases {
		if len(words) >= len(cue) && equalWords(words[:len(cue)], cue) {
			return FollowCue, true
		}
	}
	for i, w := range words {
		if referenceWords[w] {
			return FollowReference, true
		}
		if weakReferences[w] && (i == 0 || referenceLeads[words[i-1]]) {
			return FollowReference, true
		}
	}
	if fragmentStarts[words[0]] || isNumber(words[0]) {
		content := 0
		for _, w := range words {
			if !stopWords[w] {
				content++
			}
		}
		if content <= fragmentMaxWords {
			return FollowFragment, true
		}
	}
	return "", false
}

func equalWords(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func isNumber(w string) bool {
	for _, r := range w {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return w != ""
}

// continues returns the previous turn a question follows up, or nil: the
// turn must have answered (no error) with tables, and the question must
// read as a follow-up (FollowUp).
func continues(question string, prev Turn, have bool) *Turn {
	if !have || !prev.OK() || len(prev.Tables) == 0 {
		return nil
	}
	if _, ok := FollowUp(question); !ok {
		return nil
	}
	return &prev
}

// resetsSession reports whether sql is DISCARD ALL or RESET ALL (after
// comments and blanks, any case, an optional semicolon), which end a
// pooled client's use of the connection: the session's last turn is
// forgotten, so the next client's first question is never read as a
// follow-up of someone else's. A cheap prefix test runs first, since every
// statement passes here.
func resetsSession(sql string) bool {
	i := skipSpaceAndComments(sql)
	if i >= len(sql) {
		return false
	}
	switch sql[i] {
	case 'd', 'D', 'r', 'R':
	default:
		return false
	}
	words := strings.Fields(strings.ToLower(strings.TrimRight(strings.TrimSpace(sql[i:]), "; \t\r\n")))
	return len(words) == 2 && (words[0] == "discard" || words[0] == "reset") && words[1] == "all"
}
