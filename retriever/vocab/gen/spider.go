package main

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"strings"
	"unicode"
)

// spiderTable is the part of a tables.json entry the generator reads.
type spiderDB struct {
	DBID           string          `json:"db_id"`
	TableNamesOrig []string        `json:"table_names_original"`
	TableNames     []string        `json:"table_names"`
	ColumnNamesOrg [][]interface{} `json:"column_names_original"`
	ColumnNames    [][]interface{} `json:"column_names"`
}

// synQuestion is one Spider-Syn training question with its Spider original.
type synQuestion struct {
	DBID     string `json:"db_id"`
	Question string `json:"question"`
	Original string `json:"spider_question"`
	Query    string `json:"query"`
}

type spiderQuestion struct {
	DBID     string `json:"db_id"`
	Question string `json:"question"`
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("parse %s: %w", path, err)
	}
	return nil
}

// fold puts each training database in one of five folds by a hash of its
// name, so splits are fixed. The measurement keeps fold 0 back, the weight
// tuning fold 1.
func fold(db string) int {
	h := fnv.New32a()
	h.Write([]byte(db))
	return int(h.Sum32() % 5)
}

// splitIdent splits an identifier into lower-case pieces on anything not a
// letter or digit, on camelCase boundaries and between letters and digits
// (custCntry → cust, cntry; addr2 → addr, 2).
func splitIdent(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush()
			continue
		}
		if len(cur) > 0 {
			prev := rs[i-1]
			switch {
			case unicode.IsDigit(r) != unicode.IsDigit(prev):
				flush()
			case unicode.IsUpper(r) && unicode.IsLower(prev):
				flush()
			case unicode.IsUpper(r) && unicode.IsUpper(prev) && i+1 < len(rs) && unicode.IsLower(rs[i+1]):
				flush()
			}
		}
		cur = append(cur, r)
	}
	flush()
	return out
}

// words splits a question into lower-case words of letters and digits.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// opcode is one block of a token diff: a[i1:i2] became b[j1:j2].
type opcode struct {
	equal          bool
	i1, i2, j1, j2 int
}

// diff aligns two token lists by a longest common subsequence and returns
// the equal and changed blocks in order.
func diff(a, b []string) []opcode {
	n, m := len(a), len(b)
	l := make([][]int, n+1)
	for i := range l {
		l[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				l[i][j] = l[i+1][j+1] + 1
			} else {
				l[i][j] = max(l[i+1][j], l[i][j+1])
			}
		}
	}
	var ops []opcode
	i, j := 0, 0
	ci, cj := 0, 0 // start of the pending changed block
	flush := func() {
		if ci < i || cj < j {
			ops = append(ops, opcode{false, ci, i, cj, j})
		}
	}
	for i < n && j < m {
		switch {
		case a[i] == b[j]:
			flush()
			ops = append(ops, opcode{true, i, i + 1, j, j + 1})
			i++
			j++
			ci, cj = i, j
		case l[i+1][j] >= l[i][j+1]:
			i++
		default:
			j++
		}
	}
	i, j = n, m
	flush()
	return ops
}

// substitution is one schema word a Spider-Syn question replaced: syn is
// the question's word, orig the schema word of the Spider original, both
// base forms. group numbers the changed block, so the words of a phrase
// ("head office" for headquarters) share one.
type substitution struct {
	syn, orig string
	group     int
}

// substitutions aligns an original question and its Spider-Syn version and
// returns the replaced words: one for one in blocks of equal length, every
// content word of a phrase for a single word in the other, nothing for
// other shapes (rewordings the alignment cannot pair).
func substitutions(lemma func(string) string, orig, syn string, group *int) []substitution {
	a, b := words(orig), words(syn)
	var out []substitution
	add := func(s, o string) {
		if stopOrNumber(s) || stopOrNumber(o) {
			return
		}
		s, o = lemma(s), lemma(o)
		if s == o {
			return
		}
		out = append(out, substitution{s, o, *group})
	}
	for _, op := range diff(a, b) {
		if op.equal {
			continue
		}
		*group++
		na, nb := op.i2-op.i1, op.j2-op.j1
		switch {
		case na == 0 || nb == 0:
		case na == nb:
			for k := 0; k < na; k++ {
				add(b[op.j1+k], a[op.i1+k])
				*group++
			}
		case na == 1:
			for k := op.j1; k < op.j2; k++ {
				add(b[k], a[op.i1])
			}
		case nb == 1:
			for k := op.i1; k < op.i2; k++ {
				add(b[op.j1], a[k])
			}
		}
	}
	return out
}
