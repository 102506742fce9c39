package catalog

import (
	"fmt"
	"sort"
	"strings"
	"unicode"

	"github.com/atriumdb/atrium/internal/ident"
)

// docFormatVersion goes into every fingerprint: bump it when the document
// format changes so the next sync rebuilds every table once.
const docFormatVersion = "doc-v1"

// Document bounds keep one wide or wide-valued table from producing a
// document that swamps the embedder, the tsvector (1 MB limit) or the LLM.
const (
	maxDocBytes        = 16 << 10
	maxDocColumns      = 200 // columns described one per line
	maxRowSummaryCols  = 40
	maxDocValueRunes   = 80
	maxValueTextBytes  = 8 << 10
	maxIndexedValues   = 100 // distinct values per column in value_index
	maxColumnValues    = 300 // distinct values kept per column (sample ∪ MCV)
	maxIndexedValueLen = 200
	maxColumnEmbedVals = 10
)

// tableDoc is everything the sync writes for one relation.
type tableDoc struct {
	rel         *relation
	fingerprint string
	skipped     string
	estRows     int64

	purpose      *string
	descriptions map[string]string
	llmFP        string
	// glossary are the LLM's proposals from this table's comments, written
	// after the table (writeGlossary).
	glossary []GlossaryProposal

	nameText, commentText, valueText, document string

	// smp keeps the columns read and the rows that go into row summaries.
	smp         sample
	sampledRows int
	sampleFull  bool
	colValues   [][]string // distinct non-NULL sampled values per column
	colUnique   []bool
	colTexts    []string

	embedding []float32
	colEmb    [][]float32
}

// DescribeRequest is what a Describer sees of one table.
type DescribeRequest struct {
	Schema, Table, Kind string
	Comment             string
	Columns             []DescribeColumn
	Rows                []string // row summaries, "column: value | ..."
}

// DescribeColumn is one column in a DescribeRequest.
type DescribeColumn struct {
	Name, Type, Comment string
	PrimaryKey          bool
}

// Description is a Describer's answer: the table's purpose (CORE-T) and a
// description per column name (PNEUMA narrations). Either may be partial.
type Description struct {
	Purpose string
	Columns map[string]string
}

// buildDoc assembles the catalog rows of one relation from its details and
// sample. The LLM description, when there is one, is applied by
// applyDescription, which rebuilds the texts.
func buildDoc(r *relation, s sample, fp string) *tableDoc {
	d := &tableDoc{rel: r, fingerprint: fp, skipped: s.skipped}
	d.estRows = int64(max(r.RelTuples, 0))
	if s.full && int64(len(s.rows)) > d.estRows {
		d.estRows = int64(len(s.rows))
	}
	d.colValues = make([][]string, len(r.Columns))
	d.colUnique = make([]bool, len(r.Columns))
	for j, ci := range s.cols {
		seen := map[string]struct{}{}
		var vals []string
		nonNull := 0
		for _, row := range s.rows {
			if row[j] == nil {
				continue
			}
			nonNull++
			v := *row[j]
			if _, ok := seen[v]; ok {
				continue
			}
			seen[v] = struct{}{}
			vals = append(vals, v)
		}
		// A column is unique by sample only when the whole table was read.
		if s.full && nonNull >= 2 && len(vals) == nonNull {
			d.colUnique[ci] = true
		}
		for _, v := range r.Columns[ci].MCV {
			if len(vals) >= maxColumnValues {
				break
			}
			v = truncateRunes(v, maxIndexedValueLen)
			if _, ok := seen[v]; !ok {
				seen[v] = struct{}{}
				vals = append(vals, v)
			}
		}
		d.colValues[ci] = vals
	}
	for i, c := range r.Columns {
		if c.Unique || (c.NDistinct != nil && *c.NDistinct == -1) {
			d.colUnique[i] = true
		}
	}
	d.sampledRows, d.sampleFull = len(s.rows), s.full
	d.smp = sample{cols: s.cols, rows: s.rows[:min(len(s.rows), rowSummaryCount)]}
	d.render()
	return d
}

// rowSummaryCount is PNEUMA's r: rows written into each document.
const rowSummaryCount = 5

// render builds the texts from the relation, its sample and the LLM output.
func (d *tableDoc) render() {
	r, s := d.rel, d.smp
	var name strings.Builder
	name.WriteString(ident.Words(r.Schema))
	name.WriteString(" | ")
	name.WriteString(ident.Words(r.Name))
	name.WriteString(" |")
	for _, c := range r.Columns {
		name.WriteByte(' ')
		name.WriteString(ident.Words(c.Name))
		if name.Len() > maxDocBytes {
			break
		}
	}
	d.nameText = name.String()

	var com []string
	if r.Comment != nil && *r.Comment != "" {
		com = append(com, *r.Comment)
	}
	if d.purpose != nil && *d.purpose != "" {
		com = append(com, *d.purpose)
	}
	for _, c := range r.Columns {
		if c.Comment != nil && *c.Comment != "" {
			com = append(com, *c.Comment)
		}
		if desc := d.descriptions[c.Name]; desc != "" {
			com = append(com, desc)
		}
	}
	d.commentText = truncateRunes(strings.Join(com, "\n"), maxDocBytes)

	var vt strings.Builder
	for _, vals := range d.colValues {
		for _, v := range vals {
			if !hasLetter(v) {
				continue
			}
			if vt.Len()+len(v)+1 > maxValueTextBytes {
				break
			}
			vt.WriteString(truncateRunes(v, maxDocValueRunes))
			vt.WriteByte('\n')
		}
	}
	d.valueText = vt.String()

	var doc strings.Builder
	fmt.Fprintf(&doc, "Table %s.%s (%s, about %d rows)\n", r.Schema, r.Name, strings.ReplaceAll(r.Kind, "_", " "), d.estRows)
	if r.Comment != nil && *r.Comment != "" {
		fmt.Fprintf(&doc, "Comment: %s\n", truncateRunes(*r.Comment, 1000))
	}
	doc.WriteString("Columns:\n")
	for i, c := range r.Columns {
		if i >= maxDocColumns || doc.Len() > maxDocBytes/2 {
			rest := make([]string, 0, len(r.Columns)-i)
			for _, c := range r.Columns[i:] {
				rest = append(rest, c.Name)
			}
			fmt.Fprintf(&doc, "- and %d more columns: %s\n", len(rest), truncateRunes(strings.Join(rest, ", "), maxDocBytes/4))
			break
		}
		var attrs []string
		attrs = append(attrs, c.Type)
		if c.PK {
			attrs = append(attrs, "primary key")
		} else if d.colUnique[i] && c.Unique {
			attrs = append(attrs, "unique")
		}
		for _, fk := range r.FKs {
			if len(fk.Columns) == 1 && fk.Columns[0] == c.Name {
				attrs = append(attrs, "references "+fk.RefTable+"."+strings.Join(fk.RefColumns, ","))
			}
		}
		fmt.Fprintf(&doc, "- %s (%s)", c.Name, strings.Join(attrs, ", "))
		var notes []string
		if c.Comment != nil && *c.Comment != "" {
			notes = append(notes, truncateRunes(*c.Comment, 300))
		}
		if desc := d.descriptions[c.Name]; desc != "" {
			notes = append(notes, truncateRunes(desc, 300))
		}
		if len(notes) > 0 {
			doc.WriteString(": ")
			doc.WriteString(strings.Join(notes, "; "))
		}
		doc.WriteByte('\n')
	}
	rows := rowSummaries(r, s, rowSummaryCount)
	if len(rows) > 0 {
		doc.WriteString("Rows:\n")
		for _, line := range rows {
			if doc.Len()+len(line) > maxDocBytes-2048 {
				break
			}
			doc.WriteString(line)
			doc.WriteByte('\n')
		}
	}
	if d.purpose != nil && *d.purpose != "" {
		fmt.Fprintf(&doc, "Purpose: %s\n", truncateRunes(*d.purpose, 1500))
	}
	d.document = truncateRunes(doc.String(), maxDocBytes)

	d.colTexts = make([]string, len(r.Columns))
	for i, c := range r.Columns {
		d.colTexts[i] = columnEmbedText(r.Name, c.Name, d.colValues[i])
	}
}

// rowSummaries writes PNEUMA row summaries, "column: value | ...", for the
// first n sampled rows (the sample is already random for large tables).
func rowSummaries(r *relation, s sample, n int) []string {
	var out []string
	for k, row := range s.rows {
		if k >= n {
			break
		}
		var parts []string
		for j, ci := range s.cols {
			if j >= maxRowSummaryCols {
				break
			}
			v := "NULL"
			if row[j] != nil {
				v = truncateRunes(strings.ReplaceAll(*row[j], "\n", " "), maxDocValueRunes)
			}
			parts = append(parts, r.Columns[ci].Name+": "+v)
		}
		out = append(out, strings.Join(parts, " | "))
	}
	return out
}

func hasLetter(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) {
			return true
		}
	}
	return false
}

// indexedValues are the value_index rows of d: distinct sampled values with
// a letter in them (numbers and dates are better found by the SQL itself).
func (d *tableDoc) indexedValues() (cols, vals []string) {
	for i, vs := range d.colValues {
		n := 0
		sorted := append([]string(nil), vs...)
		sort.Strings(sorted)
		for _, v := range sorted {
			if n >= maxIndexedValues {
				break
			}
			if !hasLetter(v) || len(v) > maxIndexedValueLen {
				continue
			}
			cols = append(cols, d.rel.Columns[i].Name)
			vals = append(vals, v)
			n++
		}
	}
	return cols, vals
}

// describeRequest is the LLM's view of d.
func (d *tableDoc) describeRequest() DescribeRequest {
	r := d.rel
	req := DescribeRequest{Schema: r.Schema, Table: r.Name, Kind: r.Kind}
	if r.Comment != nil {
		req.Comment = *r.Comment
	}
	for i, c := range r.Columns {
		if i >= maxDocColumns {
			break
		}
		dc := DescribeColumn{Name: c.Name, Type: c.Type, PrimaryKey: c.PK}
		if c.Comment != nil {
			dc.Comment = *c.Comment
		}
		req.Columns = append(req.Columns, dc)
	}
	req.Rows = rowSummaries(r, d.smp, rowSummaryCount)
	return req
}
