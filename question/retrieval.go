package question

import (
	"context"
	"strings"
	"time"

	"github.com/atriumdb/atrium/proxy"
	"github.com/atriumdb/atrium/retriever"
	"github.com/atriumdb/atrium/sqlgen"
)

// Retriever chooses the tables a question needs; *retriever.Retriever is
// one. It is the only retrieval interface questions go through: the
// Handler wraps it with the asking role's privileges (for RETRIEVE and for
// the NL pipeline alike); both report the retrieval to the question's
// sqlgen.Tracer.
//
// RetrieveAsk gets the question with its context (the session's previous
// turn when the question follows it up, see FollowUp) and reports the
// curated examples and glossary terms that bear on it; the Handler keeps
// of them only what the asking role may read (see Readable).
type Retriever interface {
	RetrieveAsk(ctx context.Context, a retriever.Ask) (*retriever.Result, error)
}

// nlRetriever is the sqlgen.Retriever the pipeline asks: the Handler's
// retrieval, cut to what the asking session may read, in the pipeline's
// shape.
type nlRetriever struct{ h *Handler }

var _ sqlgen.Retriever = nlRetriever{}

// Retrieve implements sqlgen.Retriever. Sample rows are left to the
// pipeline, which reads them on the client's session.
func (n nlRetriever) Retrieve(ctx context.Context, up proxy.Upstream, a sqlgen.Ask) (*sqlgen.Retrieval, error) {
	res, err := n.h.retrieve(ctx, a.Question, a.Previous)
	if err != nil {
		return nil, err
	}
	// Privileges are decided here, before the retrieval reaches the
	// pipeline: the prompt, the NOTICE, the no-LLM error's DETAIL, the
	// cache and the query log only ever see what Readable keeps.
	if res, err = Readable(ctx, up, res); err != nil {
		return nil, err
	}
	return convert(res), nil
}

// convert turns a retriever result into the pipeline's Retrieval.
func convert(res *retriever.Result) *sqlgen.Retrieval {
	th := res.Threshold
	out := &sqlgen.Retrieval{Threshold: &th, Stages: Stages(res.Timings), CatalogVersion: res.CatalogVersion}
	seen := map[string]bool{}
	addJoin := func(j retriever.JoinPath) {
		if j.From == nil || j.To == nil {
			return
		}
		for i := range j.FromCols {
			if i >= len(j.ToCols) {
				break
			}
			l := j.From.Schema + "." + j.From.Name + "." + j.FromCols[i]
			r := j.To.Schema + "." + j.To.Name + "." + j.ToCols[i]
			if seen[l+"="+r] || seen[r+"="+l] {
				continue
			}
			seen[l+"="+r] = true
			out.Joins = append(out.Joins, sqlgen.Join{Left: l, Right: r})
		}
	}
	for _, rt := range res.Chosen() {
		ti := rt.Table
		if ti == nil {
			continue
		}
		t := sqlgen.Table{
			Schema: ti.Schema, Name: ti.Name, Comment: firstNonEmpty(ti.Comment, ti.Purpose),
			Score: rt.Score, Reason: strings.Join(rt.Reasons, ","),
		}
		for _, c := range ti.Columns {
			t.Columns = append(t.Columns, sqlgen.Column{
				Name: c.Name, Type: c.Type, Comment: firstNonEmpty(c.Comment, c.Description),
				PrimaryKey: c.PrimaryKey, NotNull: c.NotNull,
			})
		}
		out.Tables = append(out.Tables, t)
		for _, v := range rt.Values {
			out.Values = append(out.Values, sqlgen.ValueMatch{Schema: ti.Schema, Table: ti.Name, Column: v.Column, Value: v.Value})
		}
		for _, j := range rt.JoinPaths {
			addJoin(j)
		}
	}
	for _, j := range res.JoinPaths {
		addJoin(j)
	}
	for _, rt := range res.Tables {
		if len(out.Closest) == maxClosest {
			break
		}
		if !rt.Chosen && rt.Table != nil {
			out.Closest = append(out.Closest, rt.Table.Schema+"."+rt.Table.Name)
		}
	}
	// The reason speaks of Algorithm 1's selection (its best score, the
	// share of words it names): given only when the role may read every
	// table of it, as the closest tables are.
	if res.Abstained && allShown(res.Selected, res.Tables) {
		out.AbstainReason = res.AbstainReason
	}
	// Readable has already dropped every example, glossary term and
	// previous turn that names a relation the asking role may not read.
	for _, e := range res.Examples {
		out.Examples = append(out.Examples, sqlgen.Example{
			ID: e.ID, Question: e.Question, SQL: e.SQL, Similarity: e.Similarity, Exact: e.Exact,
			Tables: append([]string(nil), e.Tables...),
		})
	}
	for _, g := range res.Glossary {
		out.Glossary = append(out.Glossary, sqlgen.GlossaryTerm{Term: g.Term, Definition: g.Definition, SQLFragment: g.SQLFragment})
	}
	if p := res.Previous; p != nil {
		out.Previous = &sqlgen.Turn{Question: p.Question, SQL: p.SQL, Tables: append([]string(nil), p.Tables...)}
	}
	return out
}

// retrieve asks the retriever with the question's context. The previous
// turn is the caller's knowledge: it is put on the result even when the
// retriever does not echo it, so that Readable decides on it too.
func (h *Handler) retrieve(ctx context.Context, question string, prev *sqlgen.Turn) (*retriever.Result, error) {
	a := retriever.Ask{Question: question}
	if prev != nil {
		a.Previous = &retriever.Turn{Question: prev.Question, SQL: prev.SQL, Tables: append([]string(nil), prev.Tables...)}
	}
	res, err := h.ret.RetrieveAsk(ctx, a)
	if err != nil {
		return nil, err
	}
	if res.Previous == nil && a.Previous != nil {
		r := *res
		r.Previous = a.Previous
		res = &r
	}
	return res, nil
}

// allShown reports whether every table of sel is among shown (the
// ranked tables the asking role may read).
func allShown(sel []*retriever.TableInfo, shown []retriever.ResultTable) bool {
	in := map[string]bool{}
	for _, t := range shown {
		if t.Table != nil {
			in[t.Table.QualifiedName()] = true
		}
	}
	for _, t := range sel {
		if !in[t.QualifiedName()] {
			return false
		}
	}
	return true
}

// maxClosest is how many unchosen tables an abstaining answer names.
const maxClosest = 3

// Stages names the retriever's stage timings as the metrics and the query
// log do (internal/telemetry's stage names): candidates (embedding and the
// hybrid lists), rerank (ATR), expand, multihop (only when it ran) and
// total.
func Stages(t retriever.Timings) map[string]time.Duration {
	m := map[string]time.Duration{
		"candidates": t.Embed + t.Hybrid,
		"rerank":     t.ATR,
		"expand":     t.Expand,
		"total":      t.Total,
	}
	if t.Multihop > 0 {
		m["multihop"] = t.Multihop
	}
	return m
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
