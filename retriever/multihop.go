package retriever

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/pgvector/pgvector-go"

	"github.com/atriumdb/atrium/internal/llm"
)

// MultihopConfig tunes MURRE multi-hop retrieval with removal.
type MultihopConfig struct {
	// Enabled turns it on; it also needs Options.Rewriter and an Embedder.
	Enabled bool
	// Beam is B. Default 5.
	Beam int
	// Hops is H, the most hops. Default 3.
	Hops int
}

func (c MultihopConfig) withDefaults() MultihopConfig {
	if c.Beam <= 0 {
		c.Beam = 5
	}
	if c.Hops <= 0 {
		c.Hops = 3
	}
	return c
}

// Rewriter is the LLM call of MURRE's removal step: given the question and
// the tables retrieved so far (each "schema.table(col, col, ...)"), it
// returns what of the question those tables do not cover yet, expressed as
// the tables still missing, or done when they suffice.
type Rewriter interface {
	Rewrite(ctx context.Context, question string, tables []string) (rest string, done bool, err error)
}

// beamPath is one path of MURRE's beam: the tables retrieved hop by hop,
// its score (the product of Norm(cos) = (cos+1)/2 over its hops), the
// question for its next hop, and whether the LLM said nothing is missing.
type beamPath struct {
	tables []int64
	score  float64
	rest   string // question for the next hop
	done   bool
}

// murre is MURRE's beam search with removal, over injected retrieval and
// rewriting so it can be tested without a catalog.
type murre struct {
	cfg MultihopConfig
	// nearest returns the k tables nearest to text by cosine, best first.
	nearest func(ctx context.Context, text string, k int) ([]hit, error)
	// rewrite asks the LLM what of the question the path's tables leave
	// uncovered; done means nothing (the LLM answered None).
	rewrite func(ctx context.Context, tables []int64) (rest string, done bool, err error)
}

// search runs up to Hops hops of beam width Beam from question and returns
// the final beam, best first. Each active path is extended by the Beam
// nearest tables to its rewritten question that it does not hold yet; the
// Beam best paths overall survive; each new path's question is rewritten by
// the LLM (removal), which ends the path when it answers None. Finished
// paths keep competing for the beam unchanged. The last hop needs no
// rewriting, so it asks the LLM nothing.
func (m murre) search(ctx context.Context, question string) ([]*beamPath, error) {
	beams := []*beamPath{{rest: question, score: 1}}
	for hop := 0; hop < m.cfg.Hops; hop++ {
		var next []*beamPath
		active := false
		for _, b := range beams {
			if b.done {
				next = append(next, b)
				continue
			}
			active = true
			hits, err := m.nearest(ctx, b.rest, m.cfg.Beam+len(b.tables))
			if err != nil {
				return nil, err
			}
			n := 0
			for _, h := range hits {
				if n == m.cfg.Beam {
					break
				}
				if contains(b.tables, h.id) {
					continue
				}
				n++
				next = append(next, &beamPath{
					tables: append(append([]int64(nil), b.tables...), h.id),
					score:  b.score * (h.cos + 1) / 2, // Norm(cos) = (cos+1)/2
				})
			}
		}
		if !active {
			break
		}
		sort.SliceStable(next, func(i, j int) bool { return next[i].score > next[j].score })
		if len(next) > m.cfg.Beam {
			next = next[:m.cfg.Beam]
		}
		beams = next
		if hop == m.cfg.Hops-1 {
			break
		}
		// Removal: the LLM rewrites each new path's question.
		for _, b := range beams {
			if b.done || b.rest != "" {
				continue
			}
			rest, done, err := m.rewrite(ctx, b.tables)
			if err != nil {
				return nil, fmt.Errorf("multihop: rewrite question: %w", err)
			}
			b.rest, b.done = strings.TrimSpace(rest), done || strings.TrimSpace(rest) == ""
		}
	}
	return beams, nil
}

// tableScores is MURRE's table score: the best score of a path holding the
// table.
func tableScores(beams []*beamPath) map[int64]float64 {
	out := map[int64]float64{}
	for _, b := range beams {
		for _, id := range b.tables {
			if b.score > out[id] {
				out[id] = b.score
			}
		}
	}
	return out
}

// bestPath prefers paths the LLM declared complete, then the higher score.
func bestPath(beams []*beamPath) *beamPath {
	var best *beamPath
	for _, b := range beams {
		if best == nil || (b.done && !best.done) || (b.done == best.done && b.score > best.score) {
			best = b
		}
	}
	return best
}

// multihop runs MURRE's beam search and adds the tables of the best path the
// other stages missed (reason multihop), each scored with its table score.
func (r *Retriever) multihop(ctx context.Context, p *prepared, ex *expansion) error {
	if r.emb == nil || p.snap.dimension == 0 {
		return nil
	}
	m := murre{
		cfg:     r.cfg.Multihop,
		nearest: r.nearest,
		rewrite: func(ctx context.Context, ids []int64) (string, bool, error) {
			ts, err := p.snap.tables(ctx, r.db, ids)
			if err != nil {
				return "", false, err
			}
			var descs []string
			for _, id := range ids {
				if t := ts[id]; t != nil {
					descs = append(descs, describeTable(t))
				}
			}
			return r.rw.Rewrite(ctx, p.q.Text, descs)
		},
	}
	beams, err := m.search(ctx, p.q.Text)
	if err != nil {
		return err
	}
	best := bestPath(beams)
	if best == nil {
		return nil
	}
	scores := tableScores(beams)
	have := map[int64]bool{}
	for _, s := range ex.chosen {
		have[s.Table.ID] = true
	}
	for _, t := range ex.bridges {
		have[t.ID] = true
	}
	var missing []int64
	for _, id := range best.tables {
		if !have[id] {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	ts, err := p.snap.tables(ctx, r.db, missing)
	if err != nil {
		return err
	}
	for _, id := range missing {
		t := ts[id]
		if t == nil {
			continue
		}
		c := &Candidate{Table: t}
		ex.chosen = append(ex.chosen, &Scored{Candidate: c, Logit: scores[id]})
		ex.reason[id] = ReasonMultihop
		ex.info[id] = t
	}
	in := map[int64]bool{}
	for _, s := range ex.chosen {
		in[s.Table.ID] = true
	}
	for _, t := range ex.bridges {
		in[t.ID] = true
	}
	ex.paths = joinPaths(p.snap.g, in, ex.info, r.cfg.Expansion.MinEdgeScore, nil)
	return nil
}

type hit struct {
	id  int64
	cos float64
}

// nearest returns the k tables nearest to text by cosine.
func (r *Retriever) nearest(ctx context.Context, text string, k int) ([]hit, error) {
	vs, err := r.emb.Embed(ctx, []string{text})
	if err != nil {
		return nil, fmt.Errorf("multihop: embed: %w", err)
	}
	rows, err := r.db.Query(ctx, `SELECT id, 1 - (embedding <=> $1) FROM atrium.tables WHERE embedding IS NOT NULL ORDER BY embedding <=> $1, id LIMIT $2`,
		pgvector.NewVector(vs[0]), k)
	if err != nil {
		return nil, fmt.Errorf("multihop: vector search: %w", classifyCatalogErr(err))
	}
	defer rows.Close()
	var out []hit
	for rows.Next() {
		var h hit
		if err := rows.Scan(&h.id, &h.cos); err != nil {
			return nil, fmt.Errorf("multihop: vector search: %w", err)
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

func contains(ids []int64, id int64) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// describeTable renders a table as MURRE's prompts do:
// schema.table(column, column, ...).
func describeTable(t *TableInfo) string {
	cols := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		cols[i] = c.Name
	}
	return t.QualifiedName() + "(" + strings.Join(cols, ", ") + ")"
}

// removalPrompt is MURRE's removal prompt (Appendix B, Table 6) with its two
// published demonstrations.
const removalPrompt = `Given the following SQL tables, your job is to complete the possible left SQL tables given a user's request. Return None if no left SQL tables according to the user's request.

Question: Which models are lighter than 3500 but not built by the 'Ford Motor Company'?
Database: car_1.model list(model id, maker, model)
car_1.cars data(id, mpg, cylinders, edispl, horsepower, weight, accelerate, year)
car_1.car names(make id, model, make)
Completing Tables: car_1.car makers(maker)

Question: Which employee received the biggest bonus? Give me the employee name.
Database: employee_hire_evaluation.evaluation(employee id, year awarded, bonus)
employee_hire_evaluation.employee(employee id, name, age, city)
Completing Tables: None

Question: %s
Database: %s
Completing Tables:`

// OpenAIRewriter implements Rewriter with an OpenAI-compatible
// chat-completions endpoint. Safe for concurrent use.
type OpenAIRewriter struct {
	// URL is the base URL, e.g. http://host:8000/v1 (see llm.ChatURL).
	URL    string
	Model  string
	APIKey string
	// Client; nil means each call is bounded by 30 s.
	Client *http.Client
}

var _ Rewriter = (*OpenAIRewriter)(nil)

// Rewrite implements Rewriter.
func (o *OpenAIRewriter) Rewrite(ctx context.Context, question string, tables []string) (string, bool, error) {
	cfg := llm.Config{URL: o.URL, APIKey: o.APIKey, HTTPClient: o.Client}
	if o.Client == nil {
		cfg.Timeout = 30 * time.Second
	}
	c, err := llm.New(cfg)
	if err != nil {
		return "", false, fmt.Errorf("llm request: %w", err)
	}
	resp, err := c.Complete(ctx, llm.Request{Model: o.Model, MaxTokens: 200, Messages: []llm.Message{
		{Role: "user", Content: fmt.Sprintf(removalPrompt, question, strings.Join(tables, "\n"))},
	}})
	if err != nil {
		return "", false, fmt.Errorf("llm request: %w", err)
	}
	return parseRemoval(resp.Text)
}

// parseRemoval reads the model's completion: "None" ends the search,
// anything else is the next hop's question.
func parseRemoval(s string) (string, bool, error) {
	s = strings.TrimSpace(s)
	if i := strings.Index(strings.ToLower(s), "completing tables:"); i >= 0 {
		s = strings.TrimSpace(s[i+len("completing tables:"):])
	}
	if line, _, ok := strings.Cut(s, "\n\n"); ok {
		s = line
	}
	s = strings.TrimSpace(s)
	if s == "" || strings.EqualFold(strings.Trim(s, ".` "), "none") {
		return "", true, nil
	}
	return s, false, nil
}
