package retriever

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStripCourtesy(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Good morning! Are you there?", ""},
		{"Hello, how are you today?", ""},
		{"Hi there!", ""},
		{"How's it going?", ""},
		{"Hey, what's up? How many orders shipped late?", "How many orders shipped late?"},
		{"thanks", ""},
		{"Thank you very much.", ""},
		{"Nice to meet you, bye.", ""},
		{"Good morning, which customers placed the most orders?", "which customers placed the most orders?"},
		{"Hi Atrium, how many orders shipped late?", "how many orders shipped late?"},
		{"Which orders shipped late, thanks", "Which orders shipped late"},
		{"How many tickets are open? Thanks!", "How many tickets are open?"},
		{"Thanks, that was really helpful!", "that was really helpful!"},
		// Courtesy words inside a clause with other words stay.
		{"Please show the names of all singers.", "Please show the names of all singers."},
		{"How many thank you notes were sent?", "How many thank you notes were sent?"},
		{"Which shifts start in the morning?", "Which shifts start in the morning?"},
		{"What is the weather in Lisbon tomorrow?", "What is the weather in Lisbon tomorrow?"},
		// A clause in the middle stays; so does a quoted value.
		{"List songs, please, by year", "List songs, please, by year"},
		{"Which singer has a song titled 'Hey, Jude'?", "Which singer has a song titled 'Hey, Jude'?"},
		{`Hey, which albums are called "Hello, Goodbye"?`, `which albums are called "Hello, Goodbye"?`},
		{"I'm sure you're busy, thanks", "I'm sure you're busy"},
		// Nothing but punctuation or unknown words is not courtesy.
		{"???", "???"},
		// Greetings open a question; at its end "HI" and "OK" are data.
		{"Which customers live in Honolulu, HI?", "Which customers live in Honolulu, HI?"},
		{"Which stores are in Tulsa, OK", "Which stores are in Tulsa, OK"},
		{"OK, which stores are in Tulsa?", "which stores are in Tulsa?"},
		{"Which stores are in Tulsa? Bye!", "Which stores are in Tulsa?"},
		{"Thanks, bye.", ""},
		{"Atrium?", "Atrium?"},
		{"Which atrium is largest? Thanks, Atrium", "Which atrium is largest?"},
		{"asdf qwerty", "asdf qwerty"},
	} {
		require.Equal(t, tc.want, stripCourtesy(tc.in), tc.in)
	}
}

// A greeting alone chose hr.employees on the sample database (good → full,
// morning → time through the vocabulary); now nothing is searched and the
// result says why. Courtesy around a real question leaves its tables as
// they were.
func TestGreetingChoosesNothing(t *testing.T) {
	ctx, r, _ := sampleRetriever(t)
	for _, q := range []string{"Good morning! Are you there?", "Thanks!", "Hello, how are you today?"} {
		res, err := r.Retrieve(ctx, q)
		require.NoError(t, err, q)
		require.True(t, res.Abstained, q)
		require.Empty(t, chosenNames(res), q)
		require.Empty(t, res.Tables, q)
		require.Equal(t, courtesyReason, res.AbstainReason, q)
		require.Equal(t, q, res.Question, "the result keeps the user's words")
	}
	plain := chosenFor(ctx, t, r, "Which customers opened the most support tickets about late deliveries?")
	polite := chosenFor(ctx, t, r, "Good morning, which customers opened the most support tickets about late deliveries? Thanks!")
	require.Equal(t, plain, polite)
}

// FuzzStripCourtesy: whatever the input, what is left is one piece of it
// (whole clauses from the middle), and a question with no courtesy clause
// at either end comes back unchanged.
func FuzzStripCourtesy(f *testing.F) {
	for _, s := range []string{"Good morning! Are you there?", "Hi Atrium, how many orders shipped late?",
		"Which singer has a song titled 'Hey, Jude'?", `"Hello", he said, thanks.`, "?,!;", "ok ok, ok", "Atrium? thanks"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		out := stripCourtesy(q)
		if !strings.Contains(q, out) {
			t.Fatalf("%q -> %q is not a piece of the question", q, out)
		}
		if cl := splitClauses(q); strings.Join(cl, "") != q {
			t.Fatalf("clauses of %q do not join back: %q", q, cl)
		}
	})
}
