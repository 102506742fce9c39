package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/atriumdb/atrium/internal/llm"
)

// Limits on glossary entries (atrium.glossary), for people and LLMs alike.
const (
	// MaxGlossaryTerm is the longest term, in characters.
	MaxGlossaryTerm = 100
	// MaxGlossaryDefinition is the longest definition, in characters.
	MaxGlossaryDefinition = 1000
	// MaxGlossaryFragment is the longest SQL fragment, in characters.
	MaxGlossaryFragment = 2000
	// maxProposalsPerTable caps what one LLM reply may add.
	maxProposalsPerTable = 5
	// maxProposalTermWords keeps proposed terms to phrases users say.
	maxProposalTermWords = 5
)

// ErrBadGlossaryEntry marks a glossary term, definition or SQL fragment
// that is empty, too long, or not what it should be.
var ErrBadGlossaryEntry = errors.New("bad glossary entry")

func badEntry(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrBadGlossaryEntry}, args...)...)
}

// CleanGlossaryTerm trims a term, folds runs of blanks into one space and
// checks it: at most MaxGlossaryTerm characters, no control characters, at
// least one letter or digit.
func CleanGlossaryTerm(term string) (string, error) {
	t := strings.Join(strings.Fields(term), " ")
	switch {
	case t == "":
		return "", badEntry("the term is empty")
	case utf8.RuneCountInString(t) > MaxGlossaryTerm:
		return "", badEntry("the term is longer than %d characters", MaxGlossaryTerm)
	case !utf8.ValidString(t):
		return "", badEntry("the term is not valid UTF-8")
	case strings.IndexFunc(t, unicode.IsControl) >= 0:
		return "", badEntry("the term holds control characters")
	case strings.IndexFunc(t, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) < 0:
		return "", badEntry("the term has no letter or digit")
	}
	return t, nil
}

// CleanGlossaryDefinition trims a definition and checks it: not empty, at
// most MaxGlossaryDefinition characters, valid UTF-8, no control characters
// other than line breaks and tabs.
func CleanGlossaryDefinition(def string) (string, error) {
	d := strings.TrimSpace(def)
	switch {
	case d == "":
		return "", badEntry("the definition is empty")
	case utf8.RuneCountInString(d) > MaxGlossaryDefinition:
		return "", badEntry("the definition is longer than %d characters", MaxGlossaryDefinition)
	case !utf8.ValidString(d):
		return "", badEntry("the definition is not valid UTF-8")
	case strings.IndexFunc(d, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' }) >= 0:
		return "", badEntry("the definition holds control characters")
	}
	return d, nil
}

// CheckGlossaryFragment checks that an entry's SQL fragment is one SQL
// expression or condition (status = 'active' AND last_order > now() -
// interval '90 days'), as PostgreSQL's parser reads it: it must parse as
// the single output column of SELECT (<fragment>), and nothing else. A
// fragment is only ever shown to the LLM, never run by itself; the check
// keeps statements, set operations and unbalanced text out of the prompt.
// It returns the fragment trimmed.
func CheckGlossaryFragment(frag string) (string, error) {
	f := strings.TrimSpace(frag)
	switch {
	case f == "":
		return "", badEntry("the SQL fragment is empty")
	case utf8.RuneCountInString(f) > MaxGlossaryFragment:
		return "", badEntry("the SQL fragment is longer than %d characters", MaxGlossaryFragment)
	case !utf8.ValidString(f):
		return "", badEntry("the SQL fragment is not valid UTF-8")
	}
	// The newline ends a trailing -- comment before the closing
	// parenthesis; the parentheses keep "x) UNION (SELECT ..." and the like
	// from reading as more than an expression, which the tree check below
	// refuses anyway.
	res, err := pg_query.Parse("SELECT (" + f + "\n)")
	if err != nil {
		return "", badEntry("the SQL fragment is not an SQL expression or condition: %v", err)
	}
	if len(res.GetStmts()) != 1 {
		return "", badEntry("the SQL fragment is not one SQL expression or condition")
	}
	sel := res.GetStmts()[0].GetStmt().GetSelectStmt()
	if sel == nil || sel.GetOp() != pg_query.SetOperation_SETOP_NONE || len(sel.GetTargetList()) != 1 ||
		len(sel.GetFromClause()) != 0 || sel.GetWhereClause() != nil || len(sel.GetGroupClause()) != 0 ||
		sel.GetHavingClause() != nil || len(sel.GetSortClause()) != 0 || sel.GetLimitCount() != nil ||
		sel.GetLimitOffset() != nil || sel.GetWithClause() != nil || sel.GetIntoClause() != nil ||
		len(sel.GetLockingClause()) != 0 || len(sel.GetWindowClause()) != 0 || len(sel.GetValuesLists()) != 0 ||
		len(sel.GetDistinctClause()) != 0 || sel.GetTargetList()[0].GetResTarget().GetName() != "" {
		return "", badEntry("the SQL fragment is not one SQL expression or condition")
	}
	return f, nil
}

// GlossaryProposal is a glossary entry an LLM proposed from a table's
// comments. The sync stores it unreviewed (atrium.glossary.reviewed =
// false), with the table it came from as its only table.
type GlossaryProposal struct {
	Term, Definition, SQLFragment string
}

// GlossaryProposer proposes glossary entries from the comments of one
// table and its columns. The sync calls it only for tables that have
// comments, when it describes them. Implementations must be safe for
// concurrent use.
type GlossaryProposer interface {
	ProposeGlossary(ctx context.Context, req DescribeRequest) ([]GlossaryProposal, error)
}

// hasComments reports whether a table or any of its columns has a
// COMMENT: proposals come from what the DBA wrote, never from data.
func hasComments(req DescribeRequest) bool {
	if strings.TrimSpace(req.Comment) != "" {
		return true
	}
	for _, c := range req.Columns {
		if strings.TrimSpace(c.Comment) != "" {
			return true
		}
	}
	return false
}

const glossarySystemPrompt = `You collect business terms for a glossary from the comments a DBA wrote on a database table and its columns.
Reply with JSON only, no prose, in exactly the form {"glossary": [{"term": "...", "definition": "...", "sql_fragment": "..."}]}.
Propose only terms the comments define or explain, as users would say them in a question ("active customer", "net revenue"); at most 5, each at most 5 words.
definition: one or two sentences on what the term means here, from the comments only.
sql_fragment: optional; one SQL condition or expression over this table's columns that expresses the term, e.g. status = 'active'. Leave it out when the comments do not say.
When the comments define no such term, reply {"glossary": []}.`

// ProposeGlossary implements GlossaryProposer: one call per table, with the
// table's and its columns' comments. The reply is untrusted: see
// parseGlossaryProposals.
func (d *LLMDescriber) ProposeGlossary(ctx context.Context, req DescribeRequest) ([]GlossaryProposal, error) {
	if !hasComments(req) {
		return nil, nil
	}
	prompt := glossaryPrompt(req)
	resp, err := d.c.Complete(ctx, llm.Request{Model: d.model, MaxTokens: d.maxTokens, Messages: []llm.Message{
		{Role: "system", Content: glossarySystemPrompt},
		{Role: "user", Content: prompt},
	}})
	if err != nil {
		return nil, fmt.Errorf("catalog: propose glossary terms for %s.%s: %w", req.Schema, req.Table, err)
	}
	props, err := parseGlossaryProposals(resp.Text, groundingText(req))
	if err != nil {
		return nil, fmt.Errorf("catalog: propose glossary terms for %s.%s: %w", req.Schema, req.Table, err)
	}
	return props, nil
}

// groundingText is what a proposed term's words must come from: the
// table's and columns' names and comments.
func groundingText(req DescribeRequest) string {
	parts := []string{req.Schema, req.Table, req.Comment}
	for _, c := range req.Columns {
		parts = append(parts, c.Name, c.Comment)
	}
	return strings.Join(parts, "\n")
}

// glossaryPrompt shows the table's name, comment, and each column with its
// type and comment. No sample rows: terms come from the comments.
func glossaryPrompt(req DescribeRequest) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "Glossary terms for table: %s.%s\n", req.Schema, req.Table)
	if req.Comment != "" {
		fmt.Fprintf(&sb, "Comment: %s\n", req.Comment)
	}
	sb.WriteString("Columns:\n")
	for _, c := range req.Columns {
		fmt.Fprintf(&sb, "- %s (%s)", c.Name, c.Type)
		if c.Comment != "" {
			fmt.Fprintf(&sb, ": %s", c.Comment)
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}

// parseGlossaryProposals reads an LLM's glossary reply strictly: the whole
// reply (or the whole of one ```json fence) must be one JSON object with
// only the key "glossary", an array. Each entry must have only term,
// definition and sql_fragment, all strings; an entry that is malformed,
// too long, has a fragment that is not one SQL expression, or names a term
// whose words do not appear in source (groundingText: the table's names
// and comments) is dropped, not repaired. At most maxProposalsPerTable entries
// are kept, duplicates (ignoring case and plurals, termKey) once.
func parseGlossaryProposals(reply, source string) ([]GlossaryProposal, error) {
	body := strings.TrimSpace(reply)
	if rest, ok := strings.CutPrefix(body, "```"); ok {
		rest = strings.TrimPrefix(rest, "json")
		inner, ok := strings.CutSuffix(strings.TrimSpace(rest), "```")
		if !ok {
			return nil, errors.New("reply has an unterminated code fence")
		}
		body = strings.TrimSpace(inner)
	}
	var top struct {
		Glossary []json.RawMessage `json:"glossary"`
	}
	dec := json.NewDecoder(strings.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&top); err != nil {
		return nil, fmt.Errorf("reply is not the expected JSON: %w", err)
	}
	if dec.More() {
		return nil, errors.New("reply has text after the JSON object")
	}
	grounding := strings.ToLower(source)
	var out []GlossaryProposal
	seen := map[string]bool{}
	for _, raw := range top.Glossary {
		if len(out) == maxProposalsPerTable {
			break
		}
		var e struct {
			Term        *string `json:"term"`
			Definition  *string `json:"definition"`
			SQLFragment *string `json:"sql_fragment"`
		}
		d := json.NewDecoder(bytes.NewReader(raw))
		d.DisallowUnknownFields()
		if d.Decode(&e) != nil || e.Term == nil || e.Definition == nil {
			continue
		}
		term, err := CleanGlossaryTerm(*e.Term)
		if err != nil || len(strings.Fields(term)) > maxProposalTermWords || !grounded(term, grounding) {
			continue
		}
		// One line: the definition goes into prompts as a list item.
		def, err := CleanGlossaryDefinition(strings.Join(strings.Fields(*e.Definition), " "))
		if err != nil {
			continue
		}
		p := GlossaryProposal{Term: term, Definition: def}
		if e.SQLFragment != nil && strings.TrimSpace(*e.SQLFragment) != "" {
			if p.SQLFragment, err = CheckGlossaryFragment(*e.SQLFragment); err != nil {
				continue
			}
		}
		if key := termKey(term); !seen[key] {
			seen[key] = true
			out = append(out, p)
		}
	}
	return out, nil
}

// termKey identifies a term ignoring case and a plural s, as questions
// match terms ignoring word endings: "churned customers" repeats
// "Churned customer".
func termKey(term string) string {
	words := strings.Fields(strings.ToLower(term))
	for i, w := range words {
		if len(w) > 3 {
			words[i] = strings.TrimSuffix(w, "s")
		}
	}
	return strings.Join(words, " ")
}

// grounded reports whether every word of term appears in text (lower
// case), allowing a plural the text has in the singular: a proposal must
// come from what the comments and names say, not from the LLM's own ideas.
func grounded(term, text string) bool {
	words := strings.FieldsFunc(strings.ToLower(term), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	if len(words) == 0 {
		return false
	}
	for _, w := range words {
		if strings.Contains(text, w) {
			continue
		}
		if s, ok := strings.CutSuffix(w, "s"); ok && len(s) >= 3 && strings.Contains(text, s) {
			continue
		}
		return false
	}
	return true
}

// proposeGlossary asks the proposer for d's glossary entries when the
// table has comments. A failure is logged and proposes nothing: glossary
// proposals are a convenience, never a reason to fail a sync.
func (s *syncer) proposeGlossary(ctx context.Context, d *tableDoc, req DescribeRequest) []GlossaryProposal {
	if s.opts.Glossary == nil || !hasComments(req) {
		return nil
	}
	gctx, cancel := context.WithTimeout(ctx, s.opts.LLMTimeout)
	defer cancel()
	props, err := s.opts.Glossary.ProposeGlossary(gctx, req)
	if err != nil {
		s.log.Warn("LLM glossary proposal failed; no terms proposed for the table", "relation", d.rel.qualified(), "err", err)
		return nil
	}
	return props
}

// insertProposalsSQL stores proposals unreviewed; an existing term (same
// words ignoring case and surrounding blanks: the unique index
// glossary_term_key) is kept as it is, reviewed or not.
const insertProposalsSQL = `INSERT INTO atrium.glossary (term, definition, sql_fragment, tables, reviewed, source)
SELECT u.term, u.definition, nullif(u.fragment, ''), ARRAY[u.tbl], false, 'llm'
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS u(term, definition, fragment, tbl)
ON CONFLICT ((lower(btrim(term)))) DO NOTHING`

// writeGlossary stores the proposals of a chunk's tables, which writeDocs
// has just written: each proposal's only table is the table whose comments
// it came from (schema.table, as the catalog names it). A failure to store
// them is logged, like a failed proposal.
func (s *syncer) writeGlossary(ctx context.Context, docs []*tableDoc) error {
	var terms, defs, frags, tables []string
	for _, d := range docs {
		if d.skipped != "" {
			continue
		}
		for _, p := range d.glossary {
			terms = append(terms, p.Term)
			defs = append(defs, p.Definition)
			frags = append(frags, p.SQLFragment)
			tables = append(tables, d.rel.Schema+"."+d.rel.Name)
		}
		d.glossary = nil
	}
	if len(terms) == 0 {
		return nil
	}
	tag, err := s.cat.Exec(ctx, insertProposalsSQL, terms, defs, frags, tables)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		s.log.Warn("could not store glossary proposals; the tables are catalogued without them", "proposals", len(terms), "err", err)
		return nil
	}
	s.stats.GlossaryAdded += int(tag.RowsAffected())
	return nil
}
