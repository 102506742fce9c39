package atrtrain

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode"

	"github.com/atriumdb/atrium/catalog/benchload"
)

// Training value stand-ins (see train.go). Spider's train_spider.json has no
// parsed SQL, so the literals of a gold query are read from its text: a
// string constant ('x' or Spider's SQLite-style "x") compared with a column
// by =, !=, <>, LIKE or IN, the column resolved through the query's table
// aliases (T1.name) or, when bare, to the first table of the query that has
// it. A small scanner suffices: Spider's queries are flat SELECTs, and a
// literal it misses only means one value fewer in a stand-in index.

type sqlToken struct {
	text string // identifiers lower-cased; string constants unquoted
	str  bool   // a string constant
}

func scanSQL(sql string) []sqlToken {
	var out []sqlToken
	rs := []rune(sql)
	for i := 0; i < len(rs); {
		r := rs[i]
		switch {
		case unicode.IsSpace(r):
			i++
		case r == '\'' || r == '"':
			j := i + 1
			var b strings.Builder
			for j < len(rs) {
				if rs[j] == r {
					if j+1 < len(rs) && rs[j+1] == r {
						b.WriteRune(r)
						j += 2
						continue
					}
					break
				}
				b.WriteRune(rs[j])
				j++
			}
			out = append(out, sqlToken{text: b.String(), str: true})
			i = j + 1
		case unicode.IsLetter(r) || r == '_' || unicode.IsDigit(r):
			j := i
			for j < len(rs) && (unicode.IsLetter(rs[j]) || unicode.IsDigit(rs[j]) || rs[j] == '_' || rs[j] == '.') {
				j++
			}
			out = append(out, sqlToken{text: strings.ToLower(string(rs[i:j]))})
			i = j
		case r == '!' || r == '<' || r == '>':
			if i+1 < len(rs) && (rs[i+1] == '=' || rs[i+1] == '>') {
				out = append(out, sqlToken{text: string(rs[i : i+2])})
				i += 2
			} else {
				out = append(out, sqlToken{text: string(r)})
				i++
			}
		default:
			out = append(out, sqlToken{text: string(r)})
			i++
		}
	}
	return out
}

// sqlClauseWords end a FROM item (a following identifier is no alias).
var sqlClauseWords = map[string]bool{
	"where": true, "join": true, "on": true, "group": true, "order": true, "limit": true,
	"inner": true, "left": true, "right": true, "outer": true, "cross": true, "natural": true,
	"union": true, "except": true, "intersect": true, "having": true, "as": true, "using": true,
}

// sqlLiterals returns the string literals gold SQL compares with columns of
// db, resolved to "schema.table" and column.
func sqlLiterals(db *benchload.Database, sql string) []literal {
	toks := scanSQL(sql)
	cols := map[string]map[string]bool{} // table → columns, lower case
	tableName := map[string]string{}     // lower → original lower
	for _, t := range db.TableNames {
		tableName[strings.ToLower(t)] = strings.ToLower(t)
		cols[strings.ToLower(t)] = map[string]bool{}
	}
	for i := range db.ColumnNames {
		ti, name, ok := db.Column(i)
		if ok && ti < len(db.TableNames) {
			cols[strings.ToLower(db.TableNames[ti])][strings.ToLower(name)] = true
		}
	}
	alias := map[string]string{}
	var from []string
	for i := 0; i < len(toks); i++ {
		if toks[i].str || (toks[i].text != "from" && toks[i].text != "join" && toks[i].text != ",") {
			continue
		}
		if i+1 >= len(toks) || toks[i+1].str {
			continue
		}
		name := toks[i+1].text
		if _, ok := tableName[name]; !ok {
			continue
		}
		from = append(from, name)
		alias[name] = name
		j := i + 2
		if j < len(toks) && toks[j].text == "as" {
			j++
		}
		if j < len(toks) && !toks[j].str && !sqlClauseWords[toks[j].text] && isIdent(toks[j].text) {
			alias[toks[j].text] = name
		}
	}
	resolve := func(col string) (string, string, bool) {
		if a, c, ok := strings.Cut(col, "."); ok {
			t, ok := alias[a]
			if !ok || !cols[t][c] {
				return "", "", false
			}
			return t, c, true
		}
		for _, t := range from {
			if cols[t][col] {
				return t, col, true
			}
		}
		return "", "", false
	}
	var out []literal
	add := func(col string, val string) {
		val = strings.Trim(strings.TrimSpace(val), "%")
		if val == "" {
			return
		}
		if _, err := strconv.ParseFloat(val, 64); err == nil {
			return
		}
		t, c, ok := resolve(col)
		if !ok {
			return
		}
		out = append(out, literal{table: db.Schema() + "." + t, column: c, value: val})
	}
	for i, tk := range toks {
		if !tk.str {
			continue
		}
		// col op 'x' | col [not] like 'x'
		if i >= 2 {
			op := toks[i-1].text
			if op == "=" || op == "!=" || op == "<>" || op == "like" {
				c := i - 2
				if op == "like" && c >= 0 && toks[c].text == "not" {
					c--
				}
				if c >= 0 && !toks[c].str && isIdent(toks[c].text) {
					add(toks[c].text, tk.text)
					continue
				}
			}
		}
		// col [not] in ('a', 'b')
		j := i - 1
		for j >= 0 && (toks[j].str || toks[j].text == ",") {
			j--
		}
		if j >= 2 && toks[j].text == "(" && toks[j-1].text == "in" {
			c := j - 2
			if c >= 0 && toks[c].text == "not" {
				c--
			}
			if c >= 0 && !toks[c].str && isIdent(toks[c].text) {
				add(toks[c].text, tk.text)
				continue
			}
		}
		// 'x' = col
		if i+2 < len(toks) && toks[i+1].text == "=" && !toks[i+2].str && isIdent(toks[i+2].text) {
			add(toks[i+2].text, tk.text)
		}
	}
	return out
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	r := []rune(s)[0]
	return unicode.IsLetter(r) || r == '_'
}

// literal is a string constant a gold query compares a column with.
type literal struct {
	table  string // schema.table
	column string
	value  string
}

// spiderLiterals returns the text literals of Spider's parsed SQL with the
// column each is compared to. Conditions are [not, op, val_unit, val1,
// val2]; val_unit is [op, col_unit, col_unit]; col_unit is [agg, col,
// distinct].
func spiderLiterals(db *benchload.Database, parsed json.RawMessage) []literal {
	var tree any
	if len(parsed) == 0 || json.Unmarshal(parsed, &tree) != nil {
		return nil
	}
	var out []literal
	var walk func(v any)
	walk = func(v any) {
		switch n := v.(type) {
		case map[string]any:
			for _, c := range n {
				walk(c)
			}
		case []any:
			if len(n) == 5 {
				if _, ok := n[0].(bool); ok {
					if lit, ok := condLiteral(db, n); ok {
						out = append(out, lit)
					}
				}
			}
			for _, c := range n {
				walk(c)
			}
		}
	}
	walk(tree)
	return out
}

func condLiteral(db *benchload.Database, cond []any) (literal, bool) {
	vu, ok := cond[2].([]any)
	if !ok || len(vu) != 3 {
		return literal{}, false
	}
	cu, ok := vu[1].([]any)
	if !ok || len(cu) != 3 {
		return literal{}, false
	}
	ci, ok := cu[1].(float64)
	if !ok {
		return literal{}, false
	}
	s, ok := cond[3].(string)
	if !ok {
		return literal{}, false
	}
	s = strings.Trim(strings.TrimSpace(s), `"'`)
	s = strings.Trim(s, "%")
	if s == "" {
		return literal{}, false
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return literal{}, false
	}
	ti, col, ok := db.Column(int(ci))
	if !ok || ti >= len(db.TableNames) {
		return literal{}, false
	}
	return literal{table: db.Schema() + "." + strings.ToLower(db.TableNames[ti]), column: strings.ToLower(col), value: s}, true
}
