package vocab

import "math"

// Identifier segmentation. PostgreSQL folds an unquoted identifier to lower
// case, so a table created as `CREATE TABLE CustomerOrders (customerName
// text)` is stored as customerorders(customername): the case change that
// ident.Split reads word boundaries from is gone, and the identifier is one
// token no question word matches. Segment recovers the words by the
// maximum-likelihood split under Zipf's law over the word vectors'
// frequency-ordered vocabulary (a word of frequency rank r costs
// log((r+1)·ln N)), the model of wordninja and of Norvig's segmenter.

const (
	// minSegmentToken is the shortest token Segment splits: below it a
	// split is mostly two short words that happen to spell a name.
	minSegmentToken = 6
	// maxSegmentParts bounds a split: identifiers rarely run more words
	// together, and more parts means more short, spurious ones.
	maxSegmentParts = 4
)

// joiners are the short words identifiers run between others (driver_id,
// amount_paid_in_full, boys_or_girls, is_male, quantity_per_unit): a split
// may use them, and they cost no more than a top-50 word, since in
// identifiers they are that common. Other stop words (did, for, not) are no
// part: "cardid" is no "car did".
var joiners = map[string]bool{"id": true, "no": true, "of": true, "by": true, "to": true, "in": true,
	"on": true, "at": true, "is": true, "or": true, "as": true, "and": true, "per": true}

// Segment splits token, a lower-case run of ASCII letters that is no word the
// lexicon knows (customername, countrylanguage, custcntry), into the words
// and identifier abbreviations it most likely joins: [customer name],
// [country language], [cust cntry]. It returns nil when token is a word or
// abbreviation of its own (singer, qty), is shorter than six letters, or
// its likeliest reading has a part that is no known word (temperaturef is
// no "tempe ratu ref"; the f is unknown, so nil).
//
// Parts are vocabulary words of three letters or more, the joiners and
// abbreviations. Unknown parts are allowed while splitting, at Norvig's
// cost for an unseen word (likelier the shorter it is), so that a reading
// forced through rare words loses to the honest one with an unknown part. A
// vocabulary word WordNet does not know (mostly names and fragments:
// rankin, reid) costs more than its rank says; it is still a part, since
// real identifiers use such words (high schooler). A generated or jargon
// token may so be read as words it is not (tubeban as "tube ban"): the
// retriever keeps the token itself beside its reading.
func (l *Lexicon) Segment(token string) []string {
	n := len(token)
	if n < minSegmentToken || l.emb == nil || !asciiLower(token) || l.known(token) {
		return nil
	}
	nv := float64(len(l.emb.norm))
	logN := math.Log(nv)
	rare := math.Log(nv * logN)
	// cost is -log P(w) under Zipf's law; unknown reports a part no
	// vocabulary holds.
	cost := func(w string) (c float64, unknown bool) {
		r, inVocab := l.emb.index[w]
		switch {
		case joiners[w]:
			return math.Log((float64(min(r, 50)) + 1) * logN), false
		case Stop(w):
		case inVocab && len(w) >= 3:
			c = math.Log((float64(r) + 1) * logN)
			if l.words[l.Lemma(w)].pos == 0 {
				if _, ok := l.abbrev[w]; !ok {
					c += nonLemmaCost
				}
			}
			return c, false
		default:
			if _, ok := l.abbrev[w]; ok && len(w) >= 2 {
				return rare, false
			}
		}
		return rare + float64(len(w)-1)*math.Ln10, true
	}
	type cell struct {
		cost    float64
		from    int
		unknown bool
	}
	// best[i][k] is the cheapest reading of token[:i] as k parts.
	best := make([][maxSegmentParts + 1]cell, n+1)
	for i := range best {
		for k := range best[i] {
			best[i][k].cost = math.Inf(1)
		}
	}
	best[0][0].cost = 0
	for i := 1; i <= n; i++ {
		for j := max(0, i-maxWordLen); j < i; j++ {
			c, unk := cost(token[j:i])
			for k := 1; k <= maxSegmentParts; k++ {
				prev := best[j][k-1]
				if s := prev.cost + c; s < best[i][k].cost {
					best[i][k] = cell{cost: s, from: j, unknown: prev.unknown || unk}
				}
			}
		}
	}
	k := 1
	for kk := 2; kk <= maxSegmentParts; kk++ {
		if best[n][kk].cost < best[n][k].cost {
			k = kk
		}
	}
	if k == 1 || best[n][k].unknown {
		return nil
	}
	parts := make([]string, k)
	for i := n; k > 0; k-- {
		j := best[i][k].from
		parts[k-1] = token[j:i]
		i = j
	}
	return parts
}

// nonLemmaCost is added to a vocabulary word WordNet has no lemma for.
const nonLemmaCost = 3

// maxWordLen bounds the length of one part.
const maxWordLen = 20

// known reports whether w is a word or an abbreviation as it stands: in the
// word vectors, a WordNet lemma (or an inflection of one), or abbrev.tsv.
func (l *Lexicon) known(w string) bool {
	if _, ok := l.emb.index[w]; ok {
		return true
	}
	if _, ok := l.abbrev[w]; ok {
		return true
	}
	return l.words[l.Lemma(w)].pos != 0
}

func asciiLower(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 'a' || s[i] > 'z' {
			return false
		}
	}
	return true
}
