package vocab

import "sync"

// Abbreviation guessing. abbrev.tsv lists the abbreviations a reviewer and
// Spider's schemas taught (cust, qty, cntry); a real schema uses many more.
// Identifiers shorten a word in two ways, which GuessAbbreviation inverts:
// truncation (prod → product, dept → department) and dropping letters,
// mostly vowels, keeping the first (mgr → manager, bldg → building).

const (
	// guessWords is how many of the most frequent vocabulary words a guess
	// may name: rarer words are seldom what a schema abbreviates.
	guessWords = 30000
	// guessMax is how many words one token may stand for.
	guessMax = 3
)

// guessWeights are the weights of a token's guesses, best first: below
// abbrev.tsv's 0.7–0.9, since a guess is ambiguous (qty: quality or
// quantity).
var guessWeights = [guessMax]float64{0.5, 0.4, 0.3}

// guessIndex holds the guessable words by first letter, most frequent
// first.
type guessIndex struct {
	once    sync.Once
	byFirst [26][]string
}

func (l *Lexicon) guessIndex() *guessIndex {
	g := &l.guess
	g.once.Do(func() {
		if l.emb == nil {
			return
		}
		words := make([]string, len(l.emb.index))
		for w, i := range l.emb.index {
			words[i] = w
		}
		for r, w := range words {
			if r >= guessWords {
				break
			}
			if len(w) < 4 || !asciiLower(w) || Stop(w) || l.words[w].pos == 0 {
				continue
			}
			g.byFirst[w[0]-'a'] = append(g.byFirst[w[0]-'a'], w)
		}
	})
	return g
}

// GuessAbbreviation returns the words token, an identifier token that no
// vocabulary, WordNet lemma or abbreviation list knows, may abbreviate
// (Kind KindAbbreviation, weights 0.5, 0.4, 0.3): vocabulary words among
// the 30,000 most frequent that WordNet knows, at least two letters
// longer, that start with token (truncations) and then, if fewer than
// three, that contain token's letters in order with its first letter
// first (mgr → manager), each group most frequent first. nil for a token
// of fewer than three letters, a known word, or no match.
func (l *Lexicon) GuessAbbreviation(token string) []Expansion {
	n := len(token)
	if n < 3 || n > 6 || l.emb == nil || !asciiLower(token) || l.known(token) {
		return nil
	}
	cands := l.guessIndex().byFirst[token[0]-'a']
	var out []Expansion
	add := func(w string) bool {
		w = l.Lemma(w) // numbers → number
		for _, e := range out {
			if e.Term == w {
				return false
			}
		}
		out = append(out, Expansion{Term: w, Weight: guessWeights[len(out)], Kind: KindAbbreviation})
		return len(out) == guessMax
	}
	for _, w := range cands {
		if len(w) >= n+2 && w[:n] == token && add(w) {
			return out
		}
	}
	for _, w := range cands {
		if len(w) >= n+2 && subsequence(token, w) && add(w) {
			return out
		}
	}
	return out
}

// subsequence reports whether a's letters occur in b in order.
func subsequence(a, b string) bool {
	i := 0
	for j := 0; j < len(b) && i < len(a); j++ {
		if a[i] == b[j] {
			i++
		}
	}
	return i == len(a)
}
