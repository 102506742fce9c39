package retriever

import (
	"strconv"
	"strings"
)

// ResultRows renders a Result as RETRIEVE's rows in text format: rank,
// schema, table, score, chosen, reason, join_path.
func ResultRows(res *Result) [][][]byte {
	out := make([][][]byte, 0, len(res.Tables))
	for _, t := range res.Tables {
		chosen := "f"
		if t.Chosen {
			chosen = "t"
		}
		var jp []string
		for _, p := range t.JoinPaths {
			jp = append(jp, p.String())
		}
		var join []byte
		if len(jp) > 0 {
			join = []byte(strings.Join(jp, "; "))
		}
		out = append(out, [][]byte{
			[]byte(strconv.Itoa(t.Rank)),
			[]byte(t.Table.Schema),
			[]byte(t.Table.Name),
			[]byte(strconv.FormatFloat(t.Score, 'f', 4, 64)),
			[]byte(chosen),
			[]byte(joinReasons(t.Reasons)),
			join,
		})
	}
	return out
}

// JSONResult is the machine-readable form of a Result (atrium retrieve
// --json).
type JSONResult struct {
	Question       string      `json:"question"`
	CatalogVersion int64       `json:"catalog_version"`
	Threshold      float64     `json:"threshold"`
	Tables         []JSONTable `json:"tables"`
	JoinPaths      []string    `json:"join_paths"`
	// Abstained: no table answers the question, for AbstainReason.
	Abstained     bool   `json:"abstained"`
	AbstainReason string `json:"abstain_reason,omitempty"`
	// Rewrites are the question words the scorer read in the schema's
	// words ("nation→country").
	Rewrites  []string `json:"rewrites,omitempty"`
	TimingsMs struct {
		Embed, Hybrid, ATR, Expand, Multihop, Total float64
	} `json:"timings_ms"`
	// Examples and Glossary are the curated examples close to the
	// question and the glossary terms it names.
	Examples []JSONExample  `json:"examples,omitempty"`
	Glossary []JSONGlossary `json:"glossary,omitempty"`
}

// JSONGlossary is one glossary term of a JSONResult.
type JSONGlossary struct {
	ID         int64    `json:"id"`
	Term       string   `json:"term"`
	Definition string   `json:"definition"`
	Tables     []string `json:"tables"`
}

// JSONExample is one example of a JSONResult.
type JSONExample struct {
	ID         int64    `json:"id"`
	Question   string   `json:"question"`
	Similarity float64  `json:"similarity"`
	Exact      bool     `json:"exact"`
	Tables     []string `json:"tables"`
}

// JSONTable is one table of a JSONResult.
type JSONTable struct {
	Rank      int        `json:"rank"`
	Schema    string     `json:"schema"`
	Table     string     `json:"table"`
	Score     float64    `json:"score"`
	Chosen    bool       `json:"chosen"`
	Reasons   []string   `json:"reasons"`
	JoinPaths []string   `json:"join_paths,omitempty"`
	Values    []ValueHit `json:"values,omitempty"`
}

// ResultJSON converts a Result for JSON output.
func ResultJSON(res *Result) *JSONResult {
	out := &JSONResult{Question: res.Question, CatalogVersion: res.CatalogVersion, Threshold: res.Threshold,
		Tables: []JSONTable{}, JoinPaths: []string{}, Abstained: res.Abstained, AbstainReason: res.AbstainReason, Rewrites: RewriteStrings(res.Rewrites)}
	for _, t := range res.Tables {
		jt := JSONTable{Rank: t.Rank, Schema: t.Table.Schema, Table: t.Table.Name, Score: t.Score, Chosen: t.Chosen, Reasons: t.Reasons, Values: t.Values}
		for _, p := range t.JoinPaths {
			jt.JoinPaths = append(jt.JoinPaths, p.String())
		}
		out.Tables = append(out.Tables, jt)
	}
	for _, p := range res.JoinPaths {
		out.JoinPaths = append(out.JoinPaths, p.String())
	}
	for _, e := range res.Examples {
		out.Examples = append(out.Examples, JSONExample{ID: e.ID, Question: e.Question, Similarity: e.Similarity, Exact: e.Exact, Tables: e.Tables})
	}
	for _, g := range res.Glossary {
		out.Glossary = append(out.Glossary, JSONGlossary{ID: g.ID, Term: g.Term, Definition: g.Definition, Tables: g.Tables})
	}
	ms := func(d interface{ Seconds() float64 }) float64 { return d.Seconds() * 1000 }
	out.TimingsMs.Embed, out.TimingsMs.Hybrid, out.TimingsMs.ATR = ms(res.Timings.Embed), ms(res.Timings.Hybrid), ms(res.Timings.ATR)
	out.TimingsMs.Expand, out.TimingsMs.Multihop, out.TimingsMs.Total = ms(res.Timings.Expand), ms(res.Timings.Multihop), ms(res.Timings.Total)
	return out
}

// RewriteStrings renders rewrites as "from→to".
func RewriteStrings(rws []Rewrite) []string {
	var out []string
	for _, rw := range rws {
		out = append(out, rw.From+"→"+rw.To)
	}
	return out
}
