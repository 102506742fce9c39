package main

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"strings"
	"unicode"

	"github.com/atriumdb/atrium/retriever/vocab/mine"
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
type synQuestion = mine.Question

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
func words(s string) []string { return mine.Words(s) }

// stopOrNumber reports whether a question word is left out of the mined
// pairs (mine.StopOrNumber).
func stopOrNumber(w string) bool { return mine.StopOrNumber(w) }

// substitutions are mine.Substitutions.
func substitutions(lemma func(string) string, orig, syn string, group *int) []mine.Substitution {
	return mine.Substitutions(lemma, orig, syn, group)
}
