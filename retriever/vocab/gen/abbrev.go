package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/atriumdb/atrium/retriever/vocab"
)

// handAbbrev is the reviewed list of identifier abbreviations: the usual
// short forms of column and table names. An abbreviation's first word is
// its most common meaning. Weight 0.9.
var handAbbrev = [][2]string{
	{"acct", "account"}, {"acc", "account"}, {"addr", "address"}, {"adm", "administration"},
	{"admin", "administrator"}, {"admin", "administration"}, {"amt", "amount"}, {"app", "application"},
	{"appt", "appointment"}, {"approx", "approximate"}, {"apt", "apartment"}, {"attr", "attribute"},
	{"auth", "author"}, {"auth", "authorization"}, {"avg", "average"}, {"bal", "balance"},
	{"bday", "birthday"}, {"bldg", "building"}, {"cat", "category"}, {"cert", "certificate"},
	{"cfg", "configuration"}, {"chg", "change"}, {"cnt", "count"}, {"co", "company"},
	{"cntry", "country"}, {"cty", "city"}, {"conf", "conference"}, {"corp", "corporation"},
	{"cpny", "company"}, {"cr", "credit"}, {"ctry", "country"}, {"cur", "currency"},
	{"curr", "currency"}, {"cust", "customer"}, {"db", "database"}, {"deg", "degree"},
	{"dlvry", "delivery"}, {"dept", "department"}, {"dep", "department"}, {"desc", "description"},
	{"descr", "description"}, {"dest", "destination"}, {"dir", "director"}, {"dir", "directory"},
	{"dist", "distance"}, {"dist", "district"}, {"div", "division"}, {"dob", "birth"},
	{"doc", "document"}, {"dr", "doctor"}, {"dt", "date"}, {"dte", "date"},
	{"dur", "duration"}, {"edu", "education"}, {"emp", "employee"},
	{"empl", "employee"}, {"eng", "engineer"}, {"evt", "event"},
	{"exp", "expense"}, {"exp", "expiration"}, {"ext", "extension"}, {"fac", "faculty"},
	{"fin", "finance"}, {"fk", "key"}, {"fname", "first"}, {"freq", "frequency"},
	{"geo", "geography"}, {"gov", "government"}, {"govt", "government"},
	{"grp", "group"}, {"hosp", "hospital"}, {"hr", "hour"}, {"hrs", "hour"},
	{"ht", "height"}, {"id", "identifier"}, {"img", "image"}, {"info", "information"},
	{"ins", "insurance"}, {"inst", "institution"}, {"inv", "invoice"}, {"inv", "inventory"},
	{"lang", "language"}, {"lat", "latitude"}, {"lbl", "label"}, {"len", "length"},
	{"lng", "longitude"}, {"lon", "longitude"}, {"loc", "location"},
	{"lname", "last"}, {"max", "maximum"}, {"med", "medication"}, {"mfr", "manufacturer"},
	{"mgr", "manager"}, {"mgmt", "management"}, {"min", "minimum"}, {"misc", "miscellaneous"},
	{"mkt", "market"}, {"mo", "month"}, {"msg", "message"}, {"mth", "month"},
	{"nat", "nationality"}, {"nbr", "number"}, {"no", "number"}, {"num", "number"},
	{"nm", "name"}, {"nr", "number"}, {"occ", "occupation"}, {"ord", "order"},
	{"org", "organization"}, {"orig", "origin"}, {"pct", "percent"}, {"perc", "percent"},
	{"pk", "key"}, {"pmt", "payment"}, {"pos", "position"}, {"pop", "population"},
	{"pref", "preference"}, {"prev", "previous"}, {"prod", "product"}, {"prof", "professor"},
	{"prog", "program"}, {"proj", "project"}, {"pts", "point"}, {"pub", "publication"},
	{"pwd", "password"}, {"qty", "quantity"}, {"qtr", "quarter"}, {"rcpt", "receipt"},
	{"rec", "record"}, {"ref", "reference"}, {"reg", "registration"}, {"reg", "region"},
	{"rep", "representative"}, {"req", "request"}, {"res", "reservation"},
	{"rev", "revenue"}, {"sal", "salary"}, {"sched", "schedule"}, {"sec", "second"},
	{"sect", "section"}, {"seq", "sequence"}, {"shp", "shipment"}, {"spec", "specification"},
	{"sq", "square"}, {"src", "source"}, {"st", "street"}, {"st", "state"},
	{"stat", "status"}, {"std", "standard"}, {"stu", "student"}, {"stud", "student"},
	{"subj", "subject"}, {"sup", "supplier"}, {"supp", "supplier"},
	{"svc", "service"}, {"tbl", "table"}, {"tel", "telephone"}, {"temp", "temperature"},
	{"tkt", "ticket"}, {"tot", "total"}, {"trans", "transaction"}, {"txn", "transaction"},
	{"typ", "type"}, {"univ", "university"}, {"upd", "update"}, {"usr", "user"},
	{"val", "value"}, {"veh", "vehicle"}, {"ver", "version"}, {"vol", "volume"},
	{"whse", "warehouse"}, {"wh", "warehouse"}, {"wk", "week"}, {"wt", "weight"},
	{"yr", "year"}, {"yrs", "year"}, {"ph", "phone"},
	{"phn", "phone"}, {"tx", "transaction"}, {"cid", "customer"},
	{"uid", "user"}, {"pid", "person"}, {"sid", "student"}, {"eid", "employee"},
}

// abbrevPair is one mined abbreviation → word pair and the training
// databases whose schemas show it.
type abbrevPair struct {
	abbr, word string
	dbs        map[string]bool
}

// plausibleAbbrev is the sanity rule for mined pairs: the abbreviation is
// shorter, starts with the word's first letter, is a subsequence of it, and
// is not merely an inflection of it (names/name).
func plausibleAbbrev(lx *vocab.Lexicon, a, w string) bool {
	if len(a) < 2 || len(a) >= len(w) || a[0] != w[0] || !isPlainWord(a) || !isPlainWord(w) {
		return false
	}
	if lx.Lemma(a) == lx.Lemma(w) || strings.HasPrefix(w, a) && len(w)-len(a) <= 1 {
		return false
	}
	return shortens(a, w)
}

// mineAbbrev aligns every original column and table name of the training
// databases with Spider's human-readable name ("dept_id" / "department id",
// "custid" / "customer id") and returns the plausible abbreviation pairs
// (known reports WordNet lemmas), by abbreviation then by
// decreasing number of databases.
func mineAbbrev(lx *vocab.Lexicon, known func(string) bool, dbs []spiderDB, train map[string]bool) []abbrevPair {
	found := map[[2]string]*abbrevPair{}
	record := func(db, a, w string) {
		word := lx.Lemma(w)
		k := [2]string{a, word}
		p := found[k]
		if p == nil {
			p = &abbrevPair{abbr: a, word: word, dbs: map[string]bool{}}
			found[k] = p
		}
		p.dbs[db] = true
	}
	note := func(db, orig, human string) {
		o, h := splitIdent(orig), words(human)
		al, ok := alignPieces(o, h)
		if !ok {
			return
		}
		for i, g := range al {
			piece, covered := o[i], h[g.lo:g.hi]
			if len(covered) == 1 {
				if piece != covered[0] && plausibleAbbrev(lx, piece, covered[0]) {
					record(db, piece, covered[0])
				}
				continue
			}
			// A piece that joins several words (custid: customer id,
			// fname: first name) stands for each, unless it is an English
			// word (classroom); its parts that are abbreviations of their
			// own are pairs too.
			if len(piece) >= 3 && !known(piece) {
				for _, w := range covered {
					if !stopOrNumber(w) {
						record(db, piece, w)
					}
				}
			}
			for k, part := range g.parts {
				if part != covered[k] && plausibleAbbrev(lx, part, covered[k]) {
					record(db, part, covered[k])
				}
			}
		}
	}
	for _, d := range dbs {
		if !train[d.DBID] {
			continue
		}
		for i := range d.TableNamesOrig {
			if i < len(d.TableNames) {
				note(d.DBID, d.TableNamesOrig[i], d.TableNames[i])
			}
		}
		for i := range d.ColumnNamesOrg {
			if i < len(d.ColumnNames) {
				o, _ := d.ColumnNamesOrg[i][1].(string)
				h, _ := d.ColumnNames[i][1].(string)
				note(d.DBID, o, h)
			}
		}
	}
	out := make([]abbrevPair, 0, len(found))
	for _, p := range found {
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].abbr != out[j].abbr {
			return out[i].abbr < out[j].abbr
		}
		if len(out[i].dbs) != len(out[j].dbs) {
			return len(out[i].dbs) > len(out[j].dbs)
		}
		return out[i].word < out[j].word
	})
	return out
}

// writeAbbrev writes abbrev.tsv: the hand list at weight 0.9, then mined
// pairs the hand list lacks, at 0.7 (0.8 when two or more databases agree).
func writeAbbrev(w *strings.Builder, mined []abbrevPair) (hand, kept int) {
	w.WriteString("# Identifier abbreviations: <abbreviation>\t<word>\t<weight>. Hand-reviewed list (0.9), then pairs\n")
	w.WriteString("# mined from Spider training schemas (column_names_original vs column_names; 0.8 if 2+ databases, else 0.7).\n")
	seen := map[[2]string]bool{}
	for _, p := range handAbbrev {
		if seen[p] {
			continue
		}
		seen[p] = true
		fmt.Fprintf(w, "%s\t%s\t0.9\n", p[0], p[1])
		hand++
	}
	for _, p := range mined {
		k := [2]string{p.abbr, p.word}
		if seen[k] {
			continue
		}
		seen[k] = true
		wt := "0.7"
		if len(p.dbs) >= 2 {
			wt = "0.8"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\n", p.abbr, p.word, wt)
		kept++
	}
	return hand, kept
}

// group is the run of human-readable words h[lo:hi] one identifier piece
// covers, and the piece cut into one part per word.
type group struct {
	lo, hi int
	parts  []string
}

// alignPieces aligns identifier pieces with the words of a human-readable
// name, each piece covering one to three consecutive words (custid covers
// customer id). ok is false when no alignment covers everything.
func alignPieces(o, h []string) ([]group, bool) {
	var out []group
	var walk func(i, j int) bool
	walk = func(i, j int) bool {
		if i == len(o) {
			return j == len(h)
		}
		for k := 1; k <= 3 && j+k <= len(h); k++ {
			parts, ok := splitAbbrev(o[i], h[j:j+k])
			if !ok {
				continue
			}
			out = append(out, group{j, j + k, parts})
			if walk(i+1, j+k) {
				return true
			}
			out = out[:len(out)-1]
		}
		return false
	}
	if !walk(0, 0) {
		return nil, false
	}
	return out, true
}

// splitAbbrev cuts piece into len(ws) parts, each the word itself or a
// shortening of it (starting with its first letter, a subsequence of it).
func splitAbbrev(piece string, ws []string) ([]string, bool) {
	if len(ws) == 1 {
		return []string{piece}, piece == ws[0] || shortens(piece, ws[0])
	}
	for cut := 1; cut < len(piece); cut++ {
		head := piece[:cut]
		if head != ws[0] && !shortens(head, ws[0]) {
			continue
		}
		if rest, ok := splitAbbrev(piece[cut:], ws[1:]); ok {
			return append([]string{head}, rest...), true
		}
	}
	return nil, false
}

// shortens reports whether a starts with w's first letter, is shorter and
// is a subsequence of w.
func shortens(a, w string) bool {
	if a == "" || len(a) >= len(w) || a[0] != w[0] {
		return false
	}
	i := 0
	for j := 0; j < len(w) && i < len(a); j++ {
		if w[j] == a[i] {
			i++
		}
	}
	return i == len(a)
}
