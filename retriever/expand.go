package retriever

import (
	"fmt"
	"sort"
	"strings"
)

// ExpansionConfig tunes join-path expansion (REAR, CORE-T).
type ExpansionConfig struct {
	// Disabled turns expansion off: the result is ATR's selection.
	Disabled bool
	// MaxExpand is REAR's Δk′: at most this many joinable tables are added.
	// Default 3.
	MaxExpand int
	// ExpandMargin is the lowest logit−threshold margin at which a joinable
	// candidate counts as rated relevant. Default: the value trained with the
	// lite weights.
	ExpandMargin *float64
	// MaxBridgeHops bounds the join path searched to connect two selected
	// tables (edges). Default 3.
	MaxBridgeHops int
	// MinEdgeScore ignores weaker join edges. Default 0.5.
	MinEdgeScore float64
	// TauComp is CORE-T's τ_comp: a dropped candidate whose compatibility with
	// a selected table reaches it is restored (if its margin reaches
	// RestoreMargin). Default 0.9.
	TauComp float64
	// RestoreTopK limits restoration to the best K hybrid candidates.
	// Default 10.
	RestoreTopK int
	// RestoreMargin: see TauComp. Default: the trained value.
	RestoreMargin *float64
	// CoverMargin and CoverGain drive REAR's coverage expansion: a
	// candidate joinable with a chosen table is added when it names at
	// least CoverGain of the question's content words that no chosen table
	// names (see coverExpand), and its margin reaches CoverMargin (99: off). A multi-table question names its second table
	// by words the first lacks; the scorer alone often rates that table just
	// under the threshold. Default: the trained values.
	CoverMargin *float64
	CoverGain   float64
	// RefineMargin is REAR's refinement: ATR's selection is split into
	// join-connected groups (edges of MinEdgeScore or more, paths of up to
	// MaxBridgeHops); the group of the best-ranked table stays, another
	// stays only when one of its tables beats the threshold by this margin.
	// Default: the trained value.
	RefineMargin *float64
	// NoAttributes turns attribute and owner completion off (see
	// attributeExpand, ownerExpand).
	NoAttributes bool
}

func (c ExpansionConfig) withDefaults(m *LiteModel) ExpansionConfig {
	if c.MaxExpand == 0 {
		c.MaxExpand = 3
	}
	if c.MaxBridgeHops == 0 {
		c.MaxBridgeHops = 3
	}
	if c.MinEdgeScore == 0 {
		c.MinEdgeScore = 0.5
	}
	if c.TauComp == 0 {
		c.TauComp = 0.9
	}
	if c.RestoreTopK == 0 {
		c.RestoreTopK = 10
	}
	if c.ExpandMargin == nil {
		v := -1.0
		if m != nil && m.Expansion != nil {
			v = m.Expansion.ExpandMargin
		}
		c.ExpandMargin = &v
	}
	if c.RefineMargin == nil {
		v := 99.0
		if m != nil && m.Expansion != nil {
			v = m.Expansion.RefineMargin
		}
		c.RefineMargin = &v
	}
	if c.CoverMargin == nil {
		v := 99.0
		if m != nil && m.Expansion != nil && m.Expansion.CoverMargin != nil {
			v = *m.Expansion.CoverMargin
			if c.CoverGain == 0 {
				c.CoverGain = m.Expansion.CoverGain
			}
		}
		c.CoverMargin = &v
	}
	if c.RestoreMargin == nil {
		v := -1.0
		if m != nil && m.Expansion != nil {
			v = m.Expansion.RestoreMargin
		}
		c.RestoreMargin = &v
	}
	return c
}

// Reason values say why a table is in a result.
const (
	ReasonLexical  = "lexical"
	ReasonVector   = "vector"
	ReasonValue    = "value"
	ReasonJoin     = "join"
	ReasonBridge   = "bridge"
	ReasonMultihop = "multihop"
	// ReasonVocabulary: the table's name or columns carry a word the
	// question said with a synonym (Result.Rewrites).
	ReasonVocabulary = "vocabulary"
)

// JoinPath is one join condition between two chosen tables.
type JoinPath struct {
	From, To         *TableInfo
	FromCols, ToCols []string
	Source           string
	Score            float64
}

// String renders the condition as schema.a.x = schema.b.y (AND for
// multi-column keys).
func (j JoinPath) String() string {
	parts := make([]string, len(j.FromCols))
	for i := range j.FromCols {
		parts[i] = fmt.Sprintf("%s.%s = %s.%s", j.From.QualifiedName(), j.FromCols[i], j.To.QualifiedName(), j.ToCols[i])
	}
	return strings.Join(parts, " AND ")
}

type expansion struct {
	chosen  []*Scored        // final set, in order of addition
	reason  map[int64]string // table id → join | bridge for added tables
	bridges []*TableInfo     // bridge tables not among the candidates
	paths   []JoinPath       // spanning join paths over the chosen tables
	info    map[int64]*TableInfo
}

// addJoined adds s to the chosen tables as one expansion joined.
func (ex *expansion) addJoined(s *Scored, in map[int64]bool) {
	ex.chosen = append(ex.chosen, s)
	in[s.Table.ID] = true
	ex.reason[s.Table.ID] = ReasonJoin
}

// expand applies REAR expansion, Steiner bridging and CORE-T restoration to
// ATR's selection for question q. tableOf loads metadata for bridge tables
// outside the candidate list.
func expand(q *Query, ranked []*Scored, selected int, g *graph, cfg ExpansionConfig, tableOf func([]int64) (map[int64]*TableInfo, error)) (*expansion, error) {
	ex := &expansion{reason: map[int64]string{}, info: map[int64]*TableInfo{}}
	in := map[int64]bool{}
	byID := map[int64]*Scored{}
	for _, s := range ranked {
		byID[s.Table.ID] = s
		ex.info[s.Table.ID] = s.Table
	}
	okEdge := func(e *JoinEdge) bool { return e != nil && e.Score >= cfg.MinEdgeScore }
	sel := ranked[:selected]
	if g != nil && len(sel) > 1 {
		sel = refine(g, sel, cfg, okEdge)
	}
	for _, s := range sel {
		ex.chosen = append(ex.chosen, s)
		in[s.Table.ID] = true
	}
	if g == nil || len(ex.chosen) == 0 {
		return ex, nil
	}

	// 1. REAR: joinable candidates the scorer rates (nearly) relevant.
	var joinable []*Scored
	for _, s := range ranked[selected:] {
		if s.Margin() < *cfg.ExpandMargin {
			continue
		}
		for _, c := range ex.chosen {
			if okEdge(g.edge(s.Table.ID, c.Table.ID)) {
				joinable = append(joinable, s)
				break
			}
		}
	}
	sort.SliceStable(joinable, func(i, j int) bool { return joinable[i].Margin() > joinable[j].Margin() })
	added := 0
	for _, s := range joinable {
		if added >= cfg.MaxExpand {
			break
		}
		ex.addJoined(s, in)
		added++
	}
	if q != nil && *cfg.CoverMargin < 99 && added < cfg.MaxExpand {
		added += coverExpand(q, ranked[selected:], ex, in, g, cfg, okEdge, cfg.MaxExpand-added)
	}
	if q != nil && !cfg.NoAttributes && added < cfg.MaxExpand {
		added += attributeExpand(q, ranked[selected:], ex, in, g, okEdge, cfg.MaxExpand-added)
	}
	if q != nil && !cfg.NoAttributes && added < cfg.MaxExpand {
		added += ownerExpand(q, ranked[selected:], ex, in, g, okEdge, cfg.MaxExpand-added)
	}

	// 2. Bridges: connect the chosen tables along shortest join paths,
	// growing a tree from the best table (greedy Steiner approximation).
	tree := map[int64]bool{ex.chosen[0].Table.ID: true}
	grow := func(id int64) {
		// Pull in every chosen table already adjacent to the tree.
		stack := []int64{id}
		for len(stack) > 0 {
			cur := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, e := range g.adj[cur] {
				o := other(e, cur)
				if in[o] && !tree[o] && okEdge(e) {
					tree[o] = true
					stack = append(stack, o)
				}
			}
		}
	}
	grow(ex.chosen[0].Table.ID)
	var newBridges []int64
	for {
		path := nearestOutside(g, tree, in, cfg.MaxBridgeHops, cfg.MinEdgeScore, byID)
		if path == nil {
			break
		}
		for _, id := range path[1 : len(path)-1] {
			if !in[id] {
				in[id] = true
				ex.reason[id] = ReasonBridge
				if s, ok := byID[id]; ok {
					ex.chosen = append(ex.chosen, s)
				} else {
					newBridges = append(newBridges, id)
				}
			}
			tree[id] = true
		}
		last := path[len(path)-1]
		tree[last] = true
		grow(last)
		for _, id := range path[1 : len(path)-1] {
			grow(id)
		}
	}
	if len(newBridges) > 0 {
		ts, err := tableOf(newBridges)
		if err != nil {
			return nil, err
		}
		for _, id := range newBridges {
			if t := ts[id]; t != nil {
				ex.bridges = append(ex.bridges, t)
				ex.info[id] = t
			}
		}
	}

	// 3. CORE-T restoration: the most compatible dropped candidate of each
	// chosen table comes back when the compatibility reaches τ_comp.
	topK := ranked
	byRank := append([]*Scored(nil), ranked...)
	sort.SliceStable(byRank, func(i, j int) bool { return byRank[i].Rank < byRank[j].Rank })
	if len(byRank) > cfg.RestoreTopK {
		topK = byRank[:cfg.RestoreTopK]
	} else {
		topK = byRank
	}
	chosenNow := append([]*Scored(nil), ex.chosen...)
	for _, c := range chosenNow {
		var best *Scored
		bestCS := 0.0
		for _, s := range topK {
			if in[s.Table.ID] {
				continue
			}
			if cs := g.compat(c.Table.ID, s.Table.ID); cs > bestCS {
				best, bestCS = s, cs
			}
		}
		if best != nil && bestCS >= cfg.TauComp && best.Margin() >= *cfg.RestoreMargin {
			ex.addJoined(best, in)
		}
	}
	ex.paths = joinPaths(g, in, ex.info, cfg.MinEdgeScore, nil)
	return ex, nil
}

// titleStems are the stems of what says what the table is: its name and its
// own comment.
func (t *TableInfo) titleStems() map[string]bool {
	if len(t.docA.stems) == 0 {
		return t.nameA.set
	}
	m := make(map[string]bool, len(t.nameA.set)+len(t.docA.set))
	for s := range t.nameA.set {
		m[s] = true
	}
	for s := range t.docA.set {
		m[s] = true
	}
	return m
}

// coverExpand adds up to budget candidates from rest that join a chosen
// table and name question words no chosen table names (REAR expansion aimed
// at multi-table questions), best coverage first, and returns how many it
// added. A candidate's gain is the larger of two shares of the question's
// content words: those its name, non-key columns and comments carry and no
// chosen table's do, and those its name or its own comment carries and no
// chosen table's name or own comment does (a chosen products table with a
// color_code column does not make a ref_colors table redundant).
func coverExpand(q *Query, rest []*Scored, ex *expansion, in map[int64]bool, g *graph, cfg ExpansionConfig, okEdge func(*JoinEdge) bool, budget int) int {
	var terms []string
	for s := range q.content.set {
		if !genericWords[s] {
			terms = append(terms, s)
		}
	}
	if len(terms) == 0 {
		return 0
	}
	sort.Strings(terms)
	covered := map[string]bool{}
	coveredN := map[string]bool{}
	for _, c := range ex.chosen {
		for s := range ownStems(c.Table) {
			covered[s] = true
		}
		for s := range c.Table.titleStems() {
			coveredN[s] = true
		}
	}
	type cand struct {
		s   *Scored
		own map[string]bool
	}
	var pool []cand
	for _, s := range rest {
		if in[s.Table.ID] || s.Margin() < *cfg.CoverMargin {
			continue
		}
		for _, c := range ex.chosen {
			if okEdge(g.edge(s.Table.ID, c.Table.ID)) {
				pool = append(pool, cand{s, ownStems(s.Table)})
				break
			}
		}
	}
	added := 0
	for added < budget {
		best, bestGain := -1, 0.0
		for i, c := range pool {
			if in[c.s.Table.ID] {
				continue
			}
			n, nn := 0, 0
			for _, t := range terms {
				if !covered[t] && c.own[t] {
					n++
				}
				if !coveredN[t] && (c.s.Table.nameA.set[t] || c.s.Table.docA.set[t]) {
					nn++
				}
			}
			gain := float64(max(n, nn)) / float64(len(terms))
			if gain >= cfg.CoverGain && gain > 0 && (gain > bestGain+1e-12 || (best >= 0 && gain > bestGain-1e-12 && c.s.Margin() > pool[best].s.Margin())) {
				best, bestGain = i, gain
			}
		}
		if best < 0 {
			break
		}
		c := pool[best]
		ex.addJoined(c.s, in)
		for s := range c.own {
			covered[s] = true
		}
		for s := range c.s.Table.titleStems() {
			coveredN[s] = true
		}
		added++
	}
	return added
}

// attributeWords are the words that may stand between an attribute and the
// entity it belongs to: "name of the customer", "names for all customers".
var attributeWords = map[string]bool{"the": true, "each": true, "every": true, "all": true, "a": true, "an": true, "their": true, "its": true}

// attributePairs returns the question's (entity, attribute) stem pairs: two
// adjacent words ("customer names"), a possessive ("customer's name"), or
// an attribute followed by of/for and at most two determiners before the
// entity ("the names of all the customers").
func attributePairs(q *Query) [][2]string {
	w, st := q.all.words, q.all.stems
	var out [][2]string
	for i := 0; i+1 < len(w); i++ {
		if !stopwords[w[i]] && !stopwords[w[i+1]] {
			out = append(out, [2]string{st[i], st[i+1]})
		}
		if w[i+1] == "s" && i+2 < len(w) && !stopwords[w[i]] && !stopwords[w[i+2]] {
			out = append(out, [2]string{st[i], st[i+2]})
		}
		if (w[i+1] == "of" || w[i+1] == "for") && !stopwords[w[i]] && i+2 < len(w) {
			j := i + 2
			for k := 0; k < 2 && attributeWords[w[j]] && j+1 < len(w); k++ {
				j++
			}
			if !stopwords[w[j]] {
				out = append(out, [2]string{st[j], st[i]})
			}
		}
	}
	return out
}

// attributeExpand adds up to budget candidates from rest that a join edge
// ties to a chosen table and whose entity the question asks an attribute of
// that no chosen table has: in "customer names and their orders" with
// orders chosen, customers is the only table with the names, however
// redundant the scorer found it (orders names customers through its key
// column and comment, and "name" is too common a word to count as
// coverage). The attribute must be a word of one of the candidate's non-key
// columns (its name or documentation), the entity a word of its name or
// own comment, and no chosen table's name, columns or comments may carry
// the attribute.
func attributeExpand(q *Query, rest []*Scored, ex *expansion, in map[int64]bool, g *graph, okEdge func(*JoinEdge) bool, budget int) int {
	pairs := attributePairs(q)
	if len(pairs) == 0 {
		return 0
	}
	covered := func(attr string) bool {
		for _, c := range ex.chosen {
			if c.Table.nameA.set[attr] || c.Table.colStems[attr] {
				return true
			}
		}
		return false
	}
	return addJoinedWhere(rest, ex, in, budget, func(t *TableInfo) bool {
		joined := false
		for _, c := range ex.chosen {
			if okEdge(g.edge(t.ID, c.Table.ID)) {
				joined = true
				break
			}
		}
		if !joined {
			return false
		}
		title := t.titleStems()
		for _, p := range pairs {
			entity, attr := p[0], p[1]
			if entity != attr && title[entity] && nonKeyColumnStem(t, attr) && !covered(attr) {
				return true
			}
		}
		return false
	})
}

// ownerPairs returns the question's (owner, owned) stem pairs: a word, then
// "with their", "and their", "along with their" or "whose", then another
// ("customers with their orders", "customers whose orders").
func ownerPairs(q *Query) [][2]string {
	w, st := q.all.words, q.all.stems
	var out [][2]string
	for i := 0; i+2 < len(w); i++ {
		if stopwords[w[i]] {
			continue
		}
		j := i + 1
		switch {
		case w[j] == "whose":
			j++
		case (w[j] == "with" || w[j] == "and") && w[j+1] == "their":
			j += 2
		case w[j] == "along" && j+2 < len(w) && w[j+1] == "with" && w[j+2] == "their":
			j += 3
		default:
			continue
		}
		if j < len(w) && !stopwords[w[j]] {
			out = append(out, [2]string{st[i], st[j]})
		}
	}
	return out
}

// ownerExpand adds up to budget candidates from rest that a join edge ties
// to a chosen table when the question lists the two entities together,
// one as the other's: in "list customers with their orders" with orders
// chosen, the customers are what is listed, and in "orders and their
// customers" the customers are asked for too. One word of the pair must
// name the candidate (its name or own comment) and no chosen table's name,
// the other a chosen table the candidate joins. A chosen table's comment
// does not make it the owner: orders documented as "orders placed by
// customers" are not the customers.
func ownerExpand(q *Query, rest []*Scored, ex *expansion, in map[int64]bool, g *graph, okEdge func(*JoinEdge) bool, budget int) int {
	pairs := ownerPairs(q)
	if len(pairs) == 0 {
		return 0
	}
	namedByChosen := func(w string) bool {
		for _, c := range ex.chosen {
			if c.Table.nameA.set[w] {
				return true
			}
		}
		return false
	}
	return addJoinedWhere(rest, ex, in, budget, func(t *TableInfo) bool {
		title := t.titleStems()
		for _, p := range pairs {
			for _, o := range [][2]string{{p[0], p[1]}, {p[1], p[0]}} {
				mine, theirs := o[0], o[1]
				if mine == theirs || !title[mine] || namedByChosen(mine) {
					continue
				}
				for _, c := range ex.chosen {
					if c.Table.titleStems()[theirs] && okEdge(g.edge(t.ID, c.Table.ID)) {
						return true
					}
				}
			}
		}
		return false
	})
}

// addJoinedWhere adds, in rank order, up to budget candidates from rest that
// are not chosen yet and that fits accepts (it sees each addition), and
// returns how many it added.
func addJoinedWhere(rest []*Scored, ex *expansion, in map[int64]bool, budget int, fits func(*TableInfo) bool) int {
	added := 0
	for _, s := range rest {
		if added >= budget {
			break
		}
		if !in[s.Table.ID] && fits(s.Table) {
			ex.addJoined(s, in)
			added++
		}
	}
	return added
}

// nonKeyColumnStem reports whether one of t's columns other than keys
// (id, …_id, …_key) carries the stem s in its name, comment or
// description (a terse nm documented as "customer name" is a name).
func nonKeyColumnStem(t *TableInfo, s string) bool {
	for i, a := range t.colA {
		if n := len(a.words); n > 0 && (a.words[n-1] == "id" || a.words[n-1] == "key") {
			continue
		}
		if a.set[s] {
			return true
		}
		if c := t.Columns[i]; c.Comment != "" || c.Description != "" {
			if analyze(c.Comment+" "+c.Description, true).set[s] {
				return true
			}
		}
	}
	return false
}

// refine keeps the join-connected group of the best table and the groups
// with a table the scorer rates clearly relevant (REAR's refinement: tables
// the SQL needs join with each other).
func refine(g *graph, sel []*Scored, cfg ExpansionConfig, okEdge func(*JoinEdge) bool) []*Scored {
	group := make([]int, len(sel))
	for i := range group {
		group[i] = i
	}
	var find func(int) int
	find = func(x int) int {
		for group[x] != x {
			group[x] = group[group[x]]
			x = group[x]
		}
		return x
	}
	ids := map[int64]int{}
	for i, s := range sel {
		ids[s.Table.ID] = i
	}
	// Tables within MaxBridgeHops of each other over the join graph belong
	// together (a bridge can connect them later).
	for i, s := range sel {
		dist := map[int64]int{s.Table.ID: 0}
		frontier := []int64{s.Table.ID}
		for hop := 1; hop <= cfg.MaxBridgeHops && len(frontier) > 0; hop++ {
			var next []int64
			for _, cur := range frontier {
				for _, e := range g.adj[cur] {
					if !okEdge(e) {
						continue
					}
					o := other(e, cur)
					if _, ok := dist[o]; ok {
						continue
					}
					dist[o] = hop
					next = append(next, o)
					if j, ok := ids[o]; ok {
						group[find(j)] = find(i)
					}
				}
			}
			frontier = next
		}
	}
	top := find(0)
	var out []*Scored
	for i, s := range sel {
		if find(i) == top {
			out = append(out, s)
			continue
		}
		best := s.Margin()
		for j, o := range sel {
			if find(j) == find(i) {
				best = max(best, o.Margin())
			}
		}
		if best >= *cfg.RefineMargin {
			out = append(out, s)
		}
	}
	return out
}

// nearestOutside runs a BFS from the tree and returns the shortest path
// (tree node first) to a chosen table outside the tree, or nil. Among equal
// lengths the path whose intermediate tables are best-ranked candidates wins,
// then the lowest ids, so results are deterministic.
func nearestOutside(g *graph, tree, in map[int64]bool, maxHops int, minScore float64, byID map[int64]*Scored) []int64 {
	prev := map[int64]int64{}
	frontier := make([]int64, 0, len(tree))
	for id := range tree {
		frontier = append(frontier, id)
		prev[id] = -1
	}
	sort.Slice(frontier, func(i, j int) bool { return frontier[i] < frontier[j] })
	rankOf := func(id int64) int {
		if s, ok := byID[id]; ok {
			return s.Rank
		}
		return 1 << 30
	}
	for hop := 0; hop < maxHops && len(frontier) > 0; hop++ {
		var next []int64
		for _, cur := range frontier {
			for _, e := range g.adj[cur] {
				if e.Score < minScore {
					continue
				}
				o := other(e, cur)
				if _, seen := prev[o]; seen {
					continue
				}
				prev[o] = cur
				next = append(next, o)
			}
		}
		sort.SliceStable(next, func(i, j int) bool {
			ri, rj := rankOf(next[i]), rankOf(next[j])
			if ri != rj {
				return ri < rj
			}
			return next[i] < next[j]
		})
		for _, id := range next {
			if in[id] && !tree[id] {
				var path []int64
				for cur := id; cur != -1; cur = prev[cur] {
					path = append(path, cur)
				}
				for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
					path[i], path[j] = path[j], path[i]
				}
				return path
			}
		}
		frontier = next
	}
	return nil
}

// joinPaths are the join conditions shown for the chosen tables:
// spanningPaths' forest first, then every other key among them scoring at
// least minScore, best first. The SQL may use only the joins it is shown,
// and the forest keeps one key per pair of tables and none that closes a
// cycle: the average salary per department needs employees.department_id,
// but the forest had joined departments to employees by manager_id; flights
// need both the source and the destination airport's key.
func joinPaths(g *graph, in map[int64]bool, info map[int64]*TableInfo, minScore float64, prefer map[int64]bool) []JoinPath {
	out := spanningPaths(g, in, info, minScore, prefer)
	type key struct {
		from, to int64
		fromCols string
		toCols   string
	}
	keyOf := func(from, to int64, fc, tc []string) key {
		return key{from, to, strings.Join(fc, ","), strings.Join(tc, ",")}
	}
	shown := map[key]bool{}
	for _, p := range out {
		shown[keyOf(p.From.ID, p.To.ID, p.FromCols, p.ToCols)] = true
	}
	var extra []*JoinEdge
	for id := range in {
		for _, e := range g.adj[id] {
			if e.From != id || !in[e.To] || e.Score < minScore || info[e.From] == nil || info[e.To] == nil {
				continue // each edge once, from its referencing side
			}
			if k := keyOf(e.From, e.To, e.FromCols, e.ToCols); !shown[k] {
				shown[k] = true
				extra = append(extra, e)
			}
		}
	}
	sort.Slice(extra, func(i, j int) bool {
		a, b := extra[i], extra[j]
		if a.Score != b.Score {
			return a.Score > b.Score
		}
		if a.From != b.From {
			return a.From < b.From
		}
		if a.To != b.To {
			return a.To < b.To
		}
		return strings.Join(a.FromCols, ",") < strings.Join(b.FromCols, ",")
	})
	for _, e := range extra {
		out = append(out, JoinPath{From: info[e.From], To: info[e.To], FromCols: e.FromCols, ToCols: e.ToCols, Source: e.Source, Score: e.Score})
	}
	return out
}

// spanningPaths picks a maximum-score spanning forest over the chosen tables
// (Kruskal) and renders its edges as join paths. Edges between two tables
// of prefer come first: a glossary term's tables are joined directly where
// a key joins them, not through a third chosen table (shop.orders to
// shop.customers by customer_id, not by way of a shipping address).
func spanningPaths(g *graph, in map[int64]bool, info map[int64]*TableInfo, minScore float64, prefer map[int64]bool) []JoinPath {
	var edges []*JoinEdge
	for key, e := range g.best {
		if in[key[0]] && in[key[1]] && e.Score >= minScore {
			edges = append(edges, e)
		}
	}
	preferred := func(e *JoinEdge) bool { return prefer[e.From] && prefer[e.To] }
	sort.Slice(edges, func(i, j int) bool {
		if pi, pj := preferred(edges[i]), preferred(edges[j]); pi != pj {
			return pi
		}
		if edges[i].Score != edges[j].Score {
			return edges[i].Score > edges[j].Score
		}
		if edges[i].From != edges[j].From {
			return edges[i].From < edges[j].From
		}
		return edges[i].To < edges[j].To
	})
	parent := map[int64]int64{}
	var find func(int64) int64
	find = func(x int64) int64 {
		p, ok := parent[x]
		if !ok || p == x {
			return x
		}
		r := find(p)
		parent[x] = r
		return r
	}
	var out []JoinPath
	for _, e := range edges {
		a, b := find(e.From), find(e.To)
		if a == b {
			continue
		}
		parent[a] = b
		from, to := info[e.From], info[e.To]
		if from == nil || to == nil {
			continue
		}
		out = append(out, JoinPath{From: from, To: to, FromCols: e.FromCols, ToCols: e.ToCols, Source: e.Source, Score: e.Score})
	}
	return out
}
