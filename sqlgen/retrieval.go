package sqlgen

import (
	"context"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/atriumdb/atrium/proxy"
)

// Retriever chooses the tables a question needs, showing only what the
// role of the session behind up may read. The pipeline asks it once per
// uncached question, inside its read-only scope on the client's session
// (the question layer implements it over the catalog retriever).
// Implementations are safe for concurrent use.
type Retriever interface {
	Retrieve(ctx context.Context, up proxy.Upstream, a Ask) (*Retrieval, error)
}

// Ask is a question with the context it is asked in.
type Ask struct {
	Question string
	// Previous, when set, is the session's previous turn, which the
	// question follows up (the question layer decides that). It is part
	// of the cache key, so a follow-up's answer is never served for the
	// same words asked on their own, and the other way round.
	Previous *Turn
}

// Retrieval is what the retriever found for a question.
type Retrieval struct {
	// Tables are the chosen tables, best first.
	Tables []Table
	// Joins are the join conditions between chosen tables.
	Joins []Join
	// Values are value-index entries that match words of the question.
	Values []ValueMatch
	// Threshold is the reranker's threshold score, when it has one (for
	// the query log).
	Threshold *float64
	// Stages are the retriever's own stage durations by name (candidates,
	// rerank, expand...), for the query log.
	Stages map[string]time.Duration
	// CatalogVersion is the catalog version the retriever read from (0:
	// unknown), for the query log.
	CatalogVersion int64
	// Closest names the best-ranked tables the retriever did not choose
	// (schema-qualified, best first, only tables the asking role may read),
	// so a question nothing answers can say what came nearest.
	Closest []string
	// AbstainReason says why the retriever chose nothing (empty when it
	// chose tables, even if the asking role may read none of them).
	AbstainReason string

	// Examples are curated question→SQL pairs close to the question,
	// most similar first, every table of which the asking role may read;
	// the prompt shows the first few as few-shot pairs.
	Examples []Example
	// Glossary are the reviewed glossary terms the question names whose
	// tables the asking role may read; the prompt shows their definitions.
	Glossary []GlossaryTerm
	// Previous is the session's previous turn when the question follows
	// it up; the prompt shows it.
	Previous *Turn
}

// Example is a curated question→SQL pair (atrium.examples).
type Example struct {
	ID         int64
	Question   string
	SQL        string
	Similarity float64
	// Tables are the schema-qualified relations the example's SQL reads
	// (shown in the NOTICE when the example answers).
	Tables []string
	// Exact: the question equals the asked one after normalisation, so
	// its SQL may answer without an LLM call (still validated and run on
	// the client's session).
	Exact bool
}

// GlossaryTerm is a reviewed business term (atrium.glossary).
type GlossaryTerm struct {
	Term, Definition, SQLFragment string
}

// Turn is a session's previous question and the SQL that answered it.
type Turn struct {
	Question string
	SQL      string
	Tables   []string
	// RequestID is the previous question's request id, logged as the
	// follow-up's query_log.follow_up_of.
	RequestID string
}

// Table is one chosen table with what the prompt shows of it.
type Table struct {
	Schema, Name string
	Comment      string
	// Score and Reason say why the retriever chose it (shown in the notice).
	Score  float64
	Reason string
	// Columns in table order.
	Columns []Column
	// SampleRows, when set, are up to three rows in text format (nil is
	// NULL), one value per column in Columns order. When nil, the pipeline
	// reads three rows on the client's own session, so the prompt never shows
	// rows the client could not read.
	SampleRows [][]*string
}

// QualifiedName is schema.name with each part quoted only when needed.
func (t Table) QualifiedName() string {
	return quoteIdentIfNeeded(t.Schema) + "." + quoteIdentIfNeeded(t.Name)
}

// Column is one column of a chosen table.
type Column struct {
	Name string
	// Type is the SQL type as format_type prints it, e.g. "numeric(10,2)".
	Type       string
	Comment    string
	PrimaryKey bool
	NotNull    bool
}

// Join is one join condition: Left and Right are "schema.table.column"
// (composite keys are several Joins).
type Join struct {
	Left, Right string
}

// ValueMatch is a stored column value that matches the question.
type ValueMatch struct {
	Schema, Table, Column, Value string
}

// quoteIdentIfNeeded quotes an identifier unless it is a plain lower-case
// name, to keep prompts readable and the SQL the LLM copies valid.
func quoteIdentIfNeeded(s string) string {
	if s == "" {
		return `""`
	}
	for i, r := range s {
		if r == '_' || (r >= 'a' && r <= 'z') || (i > 0 && r >= '0' && r <= '9') {
			continue
		}
		return pgx.Identifier{s}.Sanitize()
	}
	if reservedKeywords[s] {
		return pgx.Identifier{s}.Sanitize()
	}
	return s
}

// reservedKeywords are PostgreSQL's reserved key words that appear as table
// or column names in real schemas (user, order, group...); they must be
// quoted to be used as identifiers.
var reservedKeywords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`all analyse analyze and any array as asc asymmetric both case cast check
		collate column constraint create current_catalog current_date current_role current_time
		current_timestamp current_user default deferrable desc distinct do else end except false
		fetch for foreign from grant group having in initially intersect into lateral leading limit
		localtime localtimestamp not null offset on only or order placing primary references
		returning select session_user some symmetric system_user table then to trailing true union unique user
		using variadic when where window with authorization binary collation concurrently cross
		current_schema freeze full ilike inner is isnull join left like natural notnull outer
		overlaps right similar tablesample verbose`) {
		m[w] = true
	}
	return m
}()
