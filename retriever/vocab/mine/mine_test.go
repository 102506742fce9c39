package mine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/atriumdb/atrium/retriever/vocab"
	"github.com/stretchr/testify/require"
)

// TestSubstitutions: one-for-one replacements and a phrase for one word
// are paired; stop words, numbers and unchanged words are not.
func TestSubstitutions(t *testing.T) {
	group := 0
	subs := Substitutions(func(s string) string { return s }, "Show the headquarters of 3 singers", "Show the head office of 3 vocalists", &group)
	var got [][2]string
	for _, s := range subs {
		got = append(got, [2]string{s.Syn, s.Orig})
	}
	require.Equal(t, [][2]string{{"head", "headquarters"}, {"office", "headquarters"}, {"vocalists", "singers"}}, got)
	require.Equal(t, "vocalists", subs[2].Form, "the word as written")
	require.Equal(t, subs[0].Group, subs[1].Group, "a phrase shares its block")
	require.NotEqual(t, subs[1].Group, subs[2].Group)
}

func TestHeldOut(t *testing.T) {
	ids := []string{"h", "B", "a", "d", "c", "b", "e", "f", "g", "a"}
	if h := HeldOut(ids, 7); len(h) != 1 || !h["c"] {
		// sorted distinct: B a b c d e f g h → position 3 is c
		t.Errorf("HeldOut = %v, want c", h)
	}
	if HeldOut(ids, 0) != nil {
		t.Error("every 0 holds something out")
	}
}

func TestNameWords(t *testing.T) {
	got := NameWords(func(w string) string { return strings.TrimSuffix(w, "s") }, []string{"singer_in_concert", "StadiumCapacities", "addr2"})
	for _, w := range []string{"singer", "in", "concert", "stadium", "capacitie", "addr", "2"} {
		if !got[w] {
			t.Errorf("NameWords lacks %q: %v", w, got)
		}
	}
}

// TestHeldOutShifted: the every shifts are disjoint folds covering every
// database, and shift 0 is the shipped split.
func TestHeldOutShifted(t *testing.T) {
	var ids []string
	for i := 0; i < 30; i++ {
		ids = append(ids, fmt.Sprintf("DB%02d", i), fmt.Sprintf("DB%02d", i)) // duplicates count once
	}
	require.Equal(t, HeldOut(ids, 7), HeldOutShifted(ids, 7, 0))
	seen := map[string]int{}
	for shift := 0; shift < 7; shift++ {
		for id := range HeldOutShifted(ids, 7, shift) {
			seen[id]++
		}
	}
	require.Len(t, seen, 30)
	for id, n := range seen {
		require.Equal(t, 1, n, id)
	}
	require.Equal(t, HeldOutShifted(ids, 7, 1), HeldOutShifted(ids, 7, 8), "modulo every")
	require.True(t, HeldOutShifted(ids, 7, 1)["db04"], "sorted position 4 = 7/2 + 1")
}

func TestValidShift(t *testing.T) {
	require.True(t, ValidShift(0, 0))
	require.True(t, ValidShift(7, 0))
	require.True(t, ValidShift(7, 6))
	require.False(t, ValidShift(7, 7))
	require.False(t, ValidShift(7, -1))
	require.False(t, ValidShift(0, 1))
}

// TestPairsInflected: a pair whose question word can be an adjective and
// was seen only inflected applies to the inflected forms alone ("goods",
// not "good"); a noun seen only in the plural, or an adjective also seen in
// its base form, is not marked.
func TestPairsInflected(t *testing.T) {
	wn := vocab.Default()
	qs := []Question{
		{DBID: "a", Original: "List all products", Question: "List all goods"},
		{DBID: "a", Original: "Count the products", Question: "Count the goods"},
		{DBID: "a", Original: "Show the singers", Question: "Show the vocalists"},
		{DBID: "a", Original: "Show the singers", Question: "Show the vocalists"},
		{DBID: "a", Original: "the quick singers", Question: "the fast singers"},
		{DBID: "a", Original: "the quick ones", Question: "the faster ones"},
	}
	got := map[string]Pair{}
	for _, p := range Pairs(wn, qs, func(string) bool { return true }) {
		got[p.Syn+">"+p.Orig] = p
	}
	require.True(t, got["good>product"].Inflected, "%v", got)
	require.False(t, got["vocalist>singer"].Inflected)
	require.False(t, got["fast>quick"].Inflected, "seen as fast, too")

	var b strings.Builder
	require.NoError(t, WriteTSV(&b, []Pair{got["good>product"], got["vocalist>singer"]}))
	require.Contains(t, b.String(), "good\tproduct\t2\t2\tinflected\n")
	require.Contains(t, b.String(), "vocalist\tsinger\t2\t2\n")
	_, err := vocab.Parse(vocab.Sources{Learned: strings.NewReader(b.String())})
	require.NoError(t, err, "the vocabulary reads what WriteTSV writes")
}
