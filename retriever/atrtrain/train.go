// Package atrtrain trains the built-in lite ATR scorer (`atrium train-atr`).
// It drives the serving retriever's own stages through retriever's training
// surface (tuning.go), so features and candidate lists mean the same at
// training time as at inference. The serving package does not import it.
package atrtrain

// Training the lite scorer (atrium train-atr).
//
// Data. Only Spider's train_spider.json, over the schemas of its databases in
// tables.json, loaded into a scratch PostgreSQL database (one schema per
// db_id, no rows) and catalogued by the ordinary `atrium catalog sync` code.
// Candidate lists come from the real hybrid search of the Retriever
// (prepare), so the lexical, vector and rank features at training time are
// computed by the same SQL and Go code as at inference. The feature vectors
// come from windowFeatures, the single definition shared with the scorer.
//
// Values. The training databases have no rows, so the catalog holds no
// sampled values. Leave-one-out stand-in: the value index of a question's
// database is the set of text literals that the gold SQL of the *other*
// questions of the same database compares with a column (read from the SQL
// text by sqlLiterals, e.g. WHERE T1.name = 'Kyle' → highschooler.name:
// Kyle; Spider's parsed SQL when a question file carries it). A literal is
// offered to the question exactly when the inference SQL would offer it (it
// shares a word with the question), its table joins the candidate union as
// the value CTE would add it, and combine/scoreValues treat it as at
// inference. The question's own literals are never seen, as at inference
// where a value only helps if the database holds it.
//
// Pools. Training does not search the 140 training databases (737 tables,
// dozens of near-identical customers/students tables) at once: per question
// the catalog is its own database plus 19 others drawn with the seeded
// generator (TrainConfig.PoolDBs), about the size of Spider dev's 20
// databases, so the negatives the threshold learns against are as many and
// as alike as at deployment. The ranking SQL scores every table of the pool
// (they are passed as extra ids) and the union is cut to the pool before
// normalisation; PostgreSQL's ts_rank_cd and the cosine are per document,
// so a table's raw scores do not depend on which other tables are present.
//
// Recipe (ATR, Appendix B). Per question the hybrid stage's top 100 tables
// of the pool are split into ranks 1–50 (likely to hold the relevant
// tables) and 51–100 (likely not); each half is a candidate list of its
// own. From each half we take the windows Algorithm 1 would score (W=20,
// R=15) with an oracle retention (gold first, then hybrid score): the
// first, lowest window, one middle window drawn with the seeded generator,
// and the last window, which decides the threshold. Loss per window:
// 0.8·L1 + 0.03·L2 + 0.13·L_RC (ATR's α, β, λ; the lite scorer has no
// table embeddings, so no L_SG). Adam with a linearly decaying rate,
// mini-batches of 64 windows in a seeded order, single-threaded and in
// float64 so a run is bit-for-bit reproducible.
//
// Held-out choices. 15% of the questions (chosen by the seed) are held out
// and run through Algorithm 1 after every epoch. ATR's loss weights put the
// threshold low (α on L1 pulls it under every relevant table, β on L2 is
// 27 times weaker), so Algorithm 1 over-selects; a constant threshold bias
// is chosen on the held-out questions (replaying Algorithm 1's threshold
// bookkeeping, which depends on the threshold only, over each question's
// trace). The epoch and bias maximising the mean of held-out F1 and
// complete recall are kept, then the expansion margins are chosen the same
// way. Nothing is chosen on Spider dev.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/atriumdb/atrium/catalog"
	"github.com/atriumdb/atrium/catalog/benchload"
	"github.com/atriumdb/atrium/internal/ident"
	"github.com/atriumdb/atrium/migrations"
	"github.com/atriumdb/atrium/retriever"
	"github.com/atriumdb/atrium/retriever/evaluate"
	"github.com/atriumdb/atrium/retriever/vocab"
	"github.com/atriumdb/atrium/retriever/vocab/mine"
)

// TrainConfig configures Train and BuildTrainingSet.
type TrainConfig struct {
	Seed      uint64  // default 1
	Epochs    int     // default 12
	Hidden    int     // default 32
	LR        float64 // default 0.003
	Batch     int     // windows per step, default 64
	ValidFrac float64 // default 0.15
	Limit     int     // questions used (0: all)
	Window    int     // default 20
	Retain    int     // default 15
	// PoolDBs is how many training databases (the question's own and
	// randomly drawn others) form the catalog a question's candidates come
	// from. Default 20: Spider dev pools 20 databases, and the threshold
	// must learn against negatives as many and as alike as at deployment.
	// Negative: the whole training catalog.
	PoolDBs int
	// AverageEpochs, when positive, makes the model the mean of the last
	// AverageEpochs epochs' weights instead of the single epoch with the
	// best held-out objective. The held-out objective moves by about 0.07
	// of F1 from one epoch to the next (docs/retrieval.md), so picking one
	// epoch is a lottery; the mean of a decaying-rate trajectory's tail
	// is steadier (stochastic weight averaging).
	AverageEpochs int
	// AugmentSchemas is the share of training questions asked against a
	// renamed copy of their database, and of the other databases of their
	// pools drawn renamed (augment.go); 0: none. It needs the copies in the
	// catalog (RunTraining loads them when it is positive).
	AugmentSchemas float64
	// VaryPool draws each training question's pool size uniformly between
	// a quarter of PoolDBs and twice it, so the threshold meets candidate
	// lists as short and as long as deployments have.
	VaryPool bool
	// ValidByDB holds out the questions of ValidFrac of the training
	// databases (seeded) instead of ValidFrac of the questions, so the
	// epoch and operating point are chosen on schemas the network never
	// saw as positives (a random question split leaves a held-out
	// question's Spider-Syn twin in training).
	ValidByDB bool
	// ValidBySQL holds out whole groups of questions that share a database
	// and a gold query (whitespace and case folded) instead of single
	// questions, ValidFrac of the questions in all. Spider asks most of its
	// queries twice and Spider-Syn rewords each of those, so a random
	// question split leaves three siblings of nearly every held-out question
	// in training, and the epoch and operating point are chosen on
	// questions the network has as good as seen. Unlike ValidByDB, every
	// training database still contributes positives.
	ValidBySQL bool
	// LearnedPairsFolds, when positive, splits the training databases into
	// that many folds and prepares each fold's questions with the
	// vocabulary's learned pairs mined from the Spider-Syn questions of the
	// other folds only (learned.go), so learned-pair evidence is as noisy
	// in training as on unseen wordings. 0: the embedded pairs (mined from
	// all of Spider-Syn train). RunTraining mines from the ExtraQuestions
	// files that carry spider_question.
	LearnedPairsFolds int
	// LearnedPairsStrict, with LearnedPairsFolds, also drops from each
	// fold's pairs those whose schema word the fold's databases carry
	// (foldPairs), so the fold's substitutions are as new to the pairs as
	// dev's.
	LearnedPairsStrict bool
	// Unanswerable is the share of training questions also asked, with no
	// table to find, against a pool of other databases (their own left
	// out; a draw where another database has tables named like all the
	// gold ones is skipped, benchload.Bench.AnsweredElsewhere). Their
	// windows hold only negatives, and in them the threshold must beat
	// every table with the weight a gold table has against it
	// (windowLoss): ATR's own loss weights such a window by β, so the
	// network meets the look-alike tables of a question asked in the
	// wrong place only as faint negatives and learns nothing of when to
	// choose none. 0: none.
	Unanswerable float64
	// Members is the number of networks TrainEnsemble trains (seeds Seed,
	// Seed+1, …) and averages; 0 or 1: one network.
	Members int
	// MaxTables bounds the operating point chosen on the held-out
	// questions (TableCap); the zero value: no bound.
	MaxTables TableCap
	Logger    *slog.Logger
}

// TableCap bounds an operating point by how many tables it chooses on
// average per held-out question: ATR for Algorithm 1's selection (the
// threshold bias and relative cut), Expanded after join expansion (the
// expansion margins); 0: no bound. The held-out objective is nearly flat
// along the precision/recall frontier, so without a bound the point a
// scorer lands on is decided by its validation split's draw
// (docs/retrieval.md, step 19); bounding it by the scorer being replaced
// (TrainJob.TablesLike) keeps the trade-off users see and lets a better
// network show as better on both figures.
type TableCap struct {
	ATR, Expanded float64
	// Band, when positive, makes the bound two-sided: a point is admitted
	// when it chooses within Band tables per question of the target, so
	// the new point keeps the reference's trade-off rather than any
	// tighter one the flat objective happens to prefer.
	Band float64
}

// admits reports whether st's average number of tables per question fits
// the bound whose target is t (t 0: no bound).
func (c TableCap) admits(st retriever.HeldOutStats, t float64) bool {
	switch {
	case t <= 0:
		return true
	case c.Band > 0:
		return math.Abs(st.AvgTables-t) <= c.Band+1e-9
	default:
		return st.AvgTables <= t+1e-9
	}
}

// capOf measures ref at its own operating point on set's held-out
// questions: the targets of a TableCap (cfg.MaxTables.Band kept), so a new
// point chooses no more tables than ref, or with a band about as many.
func capOf(ctx context.Context, set *TrainingSet, ref *retriever.LiteModel, cfg TrainConfig) (TableCap, error) {
	cfg = cfg.withDefaults()
	if len(set.valid) == 0 {
		return TableCap{}, fmt.Errorf("tables like: no held-out questions")
	}
	zero := clone(ref)
	zero.ThresholdBias, zero.RelativeCut = 0, 0
	atr := atrStats(runHeldOut(ctx, zero, set.valid, cfg.Window, cfg.Retain), cfg.Retain, ref.ThresholdBias, ref.RelativeCut)
	exp := expansionStats(runHeldOut(ctx, ref, set.valid, cfg.Window, cfg.Retain), retriever.ExpansionConfig{}.WithDefaults(ref))
	return TableCap{ATR: atr.AvgTables, Expanded: exp.AvgTables, Band: cfg.MaxTables.Band}, nil
}

func (c TrainConfig) withDefaults() TrainConfig {
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.Epochs <= 0 {
		c.Epochs = 12
	}
	if c.Hidden <= 0 {
		c.Hidden = 32
	}
	if c.LR <= 0 {
		c.LR = 0.003
	}
	if c.Batch <= 0 {
		c.Batch = 64
	}
	if c.ValidFrac <= 0 {
		c.ValidFrac = 0.15
	}
	if c.Window <= 0 {
		c.Window = retriever.DefaultWindow
	}
	if c.Retain <= 0 {
		c.Retain = retriever.DefaultRetain
	}
	if c.PoolDBs == 0 {
		c.PoolDBs = 20
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// TrainWindow is one training example: a window's features and labels.
type TrainWindow struct {
	Pair [][]float64
	Thr  []float64
	Gold []bool
	// NoAnswer marks a window of an unanswerable training question
	// (TrainConfig.Unanswerable).
	NoAnswer bool
}

// sqlGroup names the questions that ask the same thing of one database:
// Spider's paraphrases of one query and their Spider-Syn rewordings.
func sqlGroup(q *benchload.Question) string {
	return strings.ToLower(q.DBID) + "\x00" + strings.ToLower(strings.Join(strings.Fields(q.Query), " "))
}

// sqlGroupSplit draws whole SQL groups, in a seeded order, until they hold
// nValid of the used questions (the last group drawn may pass it).
func sqlGroupSplit(qs []benchload.Question, used []int, nValid int, rng *rand.Rand) map[string]bool {
	size := map[string]int{}
	var groups []string
	for _, qi := range used {
		g := sqlGroup(&qs[qi])
		if size[g] == 0 {
			groups = append(groups, g)
		}
		size[g]++
	}
	sort.Strings(groups)
	valid := map[string]bool{}
	held := 0
	for _, i := range rng.Perm(len(groups)) {
		if held >= nValid {
			break
		}
		valid[groups[i]] = true
		held += size[groups[i]]
	}
	return valid
}

// trainQuestion keeps what validation needs to rerun the pipeline.
type trainQuestion struct {
	q        *retriever.Query
	cands    []*retriever.Candidate // ranks 1–50
	low      []*retriever.Candidate // ranks 51–100
	gold     map[string]bool
	prep     *retriever.Prepared // for expansion (its join graph)
	valid    bool                // held out
	noAnswer bool                // asked without its database (TrainConfig.Unanswerable)
}

// TrainingSet is the output of BuildTrainingSet.
type TrainingSet struct {
	Train     []TrainWindow
	questions []*trainQuestion
	valid     []*trainQuestion
	Questions int
	// NoAnswer counts the unanswerable training questions
	// (TrainConfig.Unanswerable), which Questions does not.
	NoAnswer int
	Embedder string

	h1Complete int // questions whose gold tables all made the top 50
}

// BuildTrainingSet runs the hybrid stage of r (a retriever over the catalog
// of the training databases) for every question of bench and turns the
// candidate lists into training windows.
func BuildTrainingSet(ctx context.Context, r *retriever.Retriever, bench *benchload.Bench, cfg TrainConfig) (*TrainingSet, error) {
	return buildTrainingSet(ctx, r, bench, cfg, nil, nil)
}

// buildTrainingSet is BuildTrainingSet with the renamed copies of the
// training databases (by original schema) that cfg.AugmentSchemas draws
// from; they must be in r's catalog. byDB, when non-nil, gives the
// retriever (over the same catalog, with its own lexicon) that prepares
// the questions of a database (lower-case db_id); r for those it lacks.
func buildTrainingSet(ctx context.Context, r *retriever.Retriever, bench *benchload.Bench, cfg TrainConfig, variants map[string]*schemaVariant, byDB map[string]*retriever.Retriever) (*TrainingSet, error) {
	cfg = cfg.withDefaults()
	ids, err := r.TableIDs(ctx)
	if err != nil {
		return nil, err
	}
	// Literals per database, with the index of the question they came from.
	// A question never sees the literals of its own gold SQL, also when
	// another question (Spider-Syn's rewording of it) shares that SQL.
	type lit struct {
		literal
		sql string
	}
	lits := map[string][]lit{}
	for i := range bench.Questions {
		q := &bench.Questions[i]
		db := bench.DBs[strings.ToLower(q.DBID)]
		if db == nil {
			continue
		}
		ls := spiderLiterals(db, q.Parsed)
		if len(q.Parsed) == 0 {
			ls = sqlLiterals(db, q.GoldSQL())
		}
		for _, l := range ls {
			lits[db.Schema()] = append(lits[db.Schema()], lit{l, sqlKey(q.GoldSQL())})
		}
	}
	bySchema := map[string][]int64{}
	for name, id := range ids {
		s, _, _ := strings.Cut(name, ".")
		bySchema[s] = append(bySchema[s], id)
	}
	isCopy := map[string]bool{}
	for _, v := range variants {
		isCopy[v.schema] = true
	}
	// schemas are the original databases; a renamed copy is drawn in its
	// original's place.
	schemas := make([]string, 0, len(bySchema))
	for s := range bySchema {
		if !isCopy[s] {
			schemas = append(schemas, s)
		}
	}
	sort.Strings(schemas)
	poolRng := rand.New(rand.NewPCG(cfg.Seed, 0x9001))
	augRng := rand.New(rand.NewPCG(cfg.Seed, 0xa06))
	// Its own stream, so that the answerable questions' pools are drawn
	// exactly as without unanswerable ones.
	unRng := rand.New(rand.NewPCG(cfg.Seed, 0x0a5))
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x5eed))
	order := rng.Perm(len(bench.Questions))
	n := len(order)
	if cfg.Limit > 0 && cfg.Limit < n {
		n = cfg.Limit
	}
	nValid := int(math.Round(float64(n) * cfg.ValidFrac))
	validDB := map[string]bool{}
	if cfg.ValidByDB {
		dbRng := rand.New(rand.NewPCG(cfg.Seed, 0xdb5))
		var own []string
		seenDB := map[string]bool{}
		for _, qi := range order[:n] {
			if id := strings.ToLower(bench.Questions[qi].DBID); !seenDB[id] {
				seenDB[id] = true
				own = append(own, id)
			}
		}
		sort.Strings(own)
		k := int(math.Round(float64(len(own)) * cfg.ValidFrac))
		for _, i := range dbRng.Perm(len(own))[:k] {
			validDB[own[i]] = true
		}
	}
	validSQL := map[string]bool{}
	if cfg.ValidBySQL && !cfg.ValidByDB {
		validSQL = sqlGroupSplit(bench.Questions, order[:n], nValid, rand.New(rand.NewPCG(cfg.Seed, 0x5a1)))
	}
	set := &TrainingSet{}
	set.Embedder = r.EmbedderName()
	rcfg := r.Config()
	for k, qi := range order[:n] {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		bq := &bench.Questions[qi]
		gold, err := bench.GoldTables(bq)
		if err != nil {
			cfg.Logger.Debug("skip question", "err", err)
			continue
		}
		goldSet := map[string]bool{}
		for _, g := range gold {
			goldSet[g] = true
		}
		valid := k < nValid
		if cfg.ValidByDB {
			valid = validDB[strings.ToLower(bq.DBID)]
		} else if cfg.ValidBySQL {
			valid = validSQL[sqlGroup(bq)]
		}
		// A training question is asked against its database's renamed copy
		// with probability AugmentSchemas; so is each other database of
		// its pool drawn renamed (augment.go).
		renamed := func(schema string) *schemaVariant {
			if valid || cfg.AugmentSchemas <= 0 || variants[schema] == nil || augRng.Float64() >= cfg.AugmentSchemas {
				return nil
			}
			return variants[schema]
		}
		ownVar := renamed(strings.ToLower(bq.DBID))
		if ownVar != nil {
			mapped := map[string]bool{}
			for g := range goldSet {
				mapped[ownVar.mapTable(g)] = true
			}
			goldSet = mapped
		}
		question := bq.Question
		// Leave-one-out value evidence, offered as the value CTE would.
		terms := retriever.QueryTerms(question)
		hooks := &retriever.CandidateOptions{Keep: 2 * rcfg.Candidates, ExtraValues: map[int64][]retriever.ValueHit{}}
		poolDBs := cfg.PoolDBs
		if cfg.VaryPool && poolDBs > 0 && !valid {
			poolDBs = max(poolDBs/4, 2) + augRng.IntN(2*poolDBs-max(poolDBs/4, 2)+1)
		}
		if poolDBs > 0 && poolDBs < len(schemas) {
			own := strings.ToLower(bq.DBID)
			hooks.Pool = map[int64]bool{}
			add := func(s string) {
				for _, id := range bySchema[s] {
					hooks.Pool[id] = true
					hooks.ExtraIDs = append(hooks.ExtraIDs, id)
				}
			}
			if ownVar != nil {
				add(ownVar.schema)
			} else {
				add(own)
			}
			n := 1
			for _, i := range poolRng.Perm(len(schemas)) {
				if n >= poolDBs {
					break
				}
				if schemas[i] != own {
					if v := renamed(schemas[i]); v != nil {
						add(v.schema)
					} else {
						add(schemas[i])
					}
					n++
				}
			}
		}
		seen := map[string]bool{}
		for _, l := range lits[strings.ToLower(bq.DBID)] {
			if l.sql == sqlKey(bq.GoldSQL()) {
				continue
			}
			key := l.table + "\x1f" + l.column + "\x1f" + strings.ToLower(l.value)
			if seen[key] {
				continue
			}
			seen[key] = true
			if ownVar != nil {
				l.column = ownVar.mapColumn(l.table, l.column)
				l.table = ownVar.mapTable(l.table)
			}
			shares := false
			for _, w := range ident.Split(l.value) {
				if terms[w] {
					shares = true
					break
				}
			}
			id, ok := ids[l.table]
			if !shares || !ok {
				continue
			}
			if len(hooks.ExtraValues[id]) == 0 {
				hooks.ExtraIDs = append(hooks.ExtraIDs, id)
			}
			hooks.ExtraValues[id] = append(hooks.ExtraValues[id], retriever.ValueHit{Column: l.column, Value: l.value})
		}
		qr := r
		if fr := byDB[strings.ToLower(bq.DBID)]; fr != nil {
			qr = fr
		}
		p, err := qr.PrepareCandidates(ctx, question, *hooks)
		var qe *retriever.QuestionError
		if errors.As(err, &qe) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("training candidates for %q: %w", question, err)
		}
		h1, h2 := halves(p, rcfg.Candidates)
		set.Questions++
		inH1 := 0
		for _, c := range h1 {
			if goldSet[strings.ToLower(c.Table.QualifiedName())] {
				inH1++
			}
		}
		if inH1 == len(goldSet) {
			set.h1Complete++
		}
		set.questions = append(set.questions, &trainQuestion{q: p.Query, prep: p, cands: h1, low: h2, gold: goldSet, valid: valid})
		if !valid && cfg.Unanswerable > 0 && poolDBs > 0 && poolDBs < len(schemas) && unRng.Float64() < cfg.Unanswerable {
			own := strings.ToLower(bq.DBID)
			var poolIDs []string
			pool := map[int64]bool{}
			var extra []int64
			for _, i := range unRng.Perm(len(schemas)) {
				if len(poolIDs) >= poolDBs {
					break
				}
				if schemas[i] == own {
					continue
				}
				poolIDs = append(poolIDs, schemas[i])
				for _, id := range bySchema[schemas[i]] {
					pool[id] = true
					extra = append(extra, id)
				}
			}
			if !bench.AnsweredElsewhere(own, gold, poolIDs) {
				up, err := qr.PrepareCandidates(ctx, question, retriever.CandidateOptions{Keep: 2 * rcfg.Candidates, Pool: pool, ExtraIDs: extra})
				if err != nil {
					return nil, fmt.Errorf("unanswerable training candidates for %q: %w", question, err)
				}
				u1, u2 := halves(up, rcfg.Candidates)
				set.NoAnswer++
				set.questions = append(set.questions, &trainQuestion{q: up.Query, prep: up, cands: u1, low: u2, gold: map[string]bool{}, noAnswer: true})
			}
		}
		if (k+1)%1000 == 0 {
			cfg.Logger.Info("training set", "questions", k+1, "of", n)
		}
	}
	set.buildWindows(cfg)
	return set, nil
}

// halves splits a prepared question's candidates into the first half
// (ranks 1 to half, the list Algorithm 1 scores) and the rest, each
// renumbered from 1.
func halves(p *retriever.Prepared, half int) (h1, h2 []*retriever.Candidate) {
	h1 = p.Candidates
	if len(h1) > half {
		h1, h2 = p.Candidates[:half], p.Candidates[half:]
	}
	return retriever.Renumber(p.Query, h1), retriever.Renumber(p.Query, h2)
}

// buildWindows turns the collected candidate lists into training windows
// (held-out questions are kept whole for validation).
func (set *TrainingSet) buildWindows(cfg TrainConfig) {
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x3a1))
	set.Train, set.valid = nil, nil
	for _, tq := range set.questions {
		if tq.valid {
			set.valid = append(set.valid, tq)
			continue
		}
		for _, half := range [][]*retriever.Candidate{tq.cands, tq.low} {
			for _, w := range oracleWindows(half, tq.gold, cfg.Window, cfg.Retain, rng) {
				pair, thr := retriever.WindowFeatures(tq.q, w)
				tw := TrainWindow{Pair: pair, Thr: thr, Gold: make([]bool, len(w)), NoAnswer: tq.noAnswer}
				for i, c := range w {
					tw.Gold[i] = tq.gold[strings.ToLower(c.Table.QualifiedName())]
				}
				set.Train = append(set.Train, tw)
			}
		}
	}
}

// oracleWindows lists the windows Algorithm 1 scores for cands when the
// scorer retains gold tables first, then by hybrid score: the first (lowest)
// window, one middle window picked by rng, and the last.
func oracleWindows(cands []*retriever.Candidate, gold map[string]bool, W, R int, rng *rand.Rand) [][]*retriever.Candidate {
	if len(cands) == 0 {
		return nil
	}
	var all [][]*retriever.Candidate
	var retain []*retriever.Candidate
	idx := len(cands)
	for idx > 0 {
		var w []*retriever.Candidate
		if len(retain) == 0 {
			lo := max(idx-W, 0)
			w = append(w, cands[lo:idx]...)
			idx = lo
		} else {
			lo := max(idx-(W-R), 0)
			w = append(append(w, cands[lo:idx]...), retain...)
			idx = lo
		}
		all = append(all, w)
		s := append([]*retriever.Candidate(nil), w...)
		sort.SliceStable(s, func(i, j int) bool {
			gi, gj := gold[strings.ToLower(s[i].Table.QualifiedName())], gold[strings.ToLower(s[j].Table.QualifiedName())]
			if gi != gj {
				return gi
			}
			return s[i].S > s[j].S
		})
		retain = s[:min(R, len(s))]
	}
	if len(all) <= 2 {
		return all
	}
	mid := all[1+rng.IntN(len(all)-2)]
	return [][]*retriever.Candidate{all[0], mid, all[len(all)-1]}
}

// ATR loss weights (ATR, Appendix A).
const (
	lossAlpha  = 0.8
	lossBeta   = 0.03
	lossLambda = 0.13
)

// windowLoss returns ATR's loss for one window and its gradient with respect
// to the table logits and the threshold logit. In a window of an
// unanswerable question (noAnswer) the threshold is the answer: L2 is
// weighted by α, as a gold table is in L1, instead of β.
func windowLoss(logits []float64, thr float64, gold []bool, noAnswer bool) (loss float64, gl []float64, gt float64) {
	n := len(logits)
	gl = make([]float64, n)
	// L1 = −Σ_{r∈P} log softmax_{P∪{th}}(r)
	var pos, neg []int
	for i, g := range gold {
		if g {
			pos = append(pos, i)
		} else {
			neg = append(neg, i)
		}
	}
	if len(pos) > 0 {
		m := thr
		for _, i := range pos {
			m = math.Max(m, logits[i])
		}
		z := math.Exp(thr - m)
		for _, i := range pos {
			z += math.Exp(logits[i] - m)
		}
		lse := m + math.Log(z)
		k := float64(len(pos))
		for _, i := range pos {
			loss += lossAlpha * (lse - logits[i])
			gl[i] += lossAlpha * (k*math.Exp(logits[i]-lse) - 1)
		}
		gt += lossAlpha * k * math.Exp(thr-lse)
	}
	// L2 = −log softmax_{N∪{th}}(th)
	{
		beta := lossBeta
		if noAnswer {
			beta = lossAlpha
		}
		m := thr
		for _, i := range neg {
			m = math.Max(m, logits[i])
		}
		z := math.Exp(thr - m)
		for _, i := range neg {
			z += math.Exp(logits[i] - m)
		}
		lse := m + math.Log(z)
		loss += beta * (lse - thr)
		gt += beta * (math.Exp(thr-lse) - 1)
		for _, i := range neg {
			gl[i] += beta * math.Exp(logits[i]-lse)
		}
	}
	// L_RC = −(1/|P∪N|) Σ [y log σ(l) + (1−y) log(1−σ(l))]
	if n > 0 {
		for i, l := range logits {
			y := 0.0
			if gold[i] {
				y = 1
			}
			// log σ(l) = −softplus(−l); log(1−σ(l)) = −softplus(l)
			if gold[i] {
				loss += lossLambda * softplus(-l) / float64(n)
			} else {
				loss += lossLambda * softplus(l) / float64(n)
			}
			gl[i] += lossLambda * (sigmoid(l) - y) / float64(n)
		}
	}
	return loss, gl, gt
}

func softplus(x float64) float64 {
	if x > 30 {
		return x
	}
	return math.Log1p(math.Exp(x))
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// Train fits a LiteModel to set. Deterministic for a given set and config.
func Train(ctx context.Context, set *TrainingSet, cfg TrainConfig) (*retriever.LiteModel, error) {
	cfg = cfg.withDefaults()
	if len(set.Train) == 0 {
		return nil, fmt.Errorf("train: no training windows")
	}
	m := &retriever.LiteModel{Format: retriever.LiteFormat, PairFeatures: retriever.NumPairFeatures, ThreshFeatures: retriever.NumThreshFeatures, Hidden: cfg.Hidden}
	var constant []bool
	m.PairMean, m.PairStd, constant = standardize(set.Train, func(w TrainWindow) [][]float64 { return w.Pair }, retriever.NumPairFeatures)
	m.ThrMean, m.ThrStd, _ = standardize(set.Train, func(w TrainWindow) [][]float64 { return [][]float64{w.Thr} }, retriever.NumThreshFeatures)
	m.ThrMean[0], m.ThrStd[0] = 0, 1 // the bias slot
	for k := retriever.ThreshLogitSlot; k < retriever.ThreshLogitSlot+3; k++ {
		m.ThrMean[k], m.ThrStd[k] = 0, 1 // logit slots, filled per window
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x7a1))
	scale := 1 / math.Sqrt(float64(retriever.NumPairFeatures))
	m.W1 = make([][]float64, cfg.Hidden)
	for j := range m.W1 {
		m.W1[j] = make([]float64, retriever.NumPairFeatures)
		for k := range m.W1[j] {
			m.W1[j][k] = rng.NormFloat64() * scale
		}
	}
	// A pair feature that never varies in the training windows (comment
	// coverage, when no training schema has comments) is zero after
	// standardising, so its weights learn nothing and would keep their
	// random draw, adding noise wherever the feature does vary at
	// inference. Zeroing them leaves training itself unchanged (the draw
	// still happens, so the rest of the initialisation is the same).
	for k, c := range constant {
		if c {
			for j := range m.W1 {
				m.W1[j][k] = 0
			}
		}
	}
	m.B1 = make([]float64, cfg.Hidden)
	m.W2 = make([]float64, cfg.Hidden)
	for j := range m.W2 {
		m.W2[j] = rng.NormFloat64() / math.Sqrt(float64(cfg.Hidden))
	}
	m.V = make([]float64, retriever.NumThreshFeatures)
	m.U = make([]float64, retriever.NumPairFeatures)

	b2 := []float64{m.B2}
	params := params(m, b2)
	opt := newAdam(params, cfg.LR)
	grads := make([][]float64, len(params))
	for i, p := range params {
		grads[i] = make([]float64, len(p))
	}
	best := clone(m)
	bestScore := -1.0
	var lastLoss float64
	order := make([]int, len(set.Train))
	for i := range order {
		order[i] = i
	}
	h := make([]float64, cfg.Hidden)
	x := make([]float64, retriever.NumPairFeatures)
	var snapshots []*retriever.LiteModel
	for epoch := 1; epoch <= cfg.Epochs; epoch++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		// Linear decay to a tenth: late epochs refine rather than jump, so
		// the held-out choice of epoch is less of a lottery.
		opt.lr = cfg.LR * (1 - 0.9*float64(epoch-1)/float64(max(cfg.Epochs-1, 1)))
		total := 0.0
		for start := 0; start < len(order); start += cfg.Batch {
			end := min(start+cfg.Batch, len(order))
			for _, g := range grads {
				clear(g)
			}
			for _, wi := range order[start:end] {
				total += accumulate(m, &set.Train[wi], grads, x, h)
			}
			inv := 1 / float64(end-start)
			for _, g := range grads {
				for k := range g {
					g[k] *= inv
				}
			}
			opt.step(params, grads)
			m.B2 = b2[0]
		}
		lastLoss = total / float64(len(order))
		if cfg.AverageEpochs > 0 {
			snapshots = append(snapshots, clone(m))
		}
		var bias, cut float64
		var st retriever.HeldOutStats
		if len(set.valid) > 0 {
			bias, cut, st = chooseBias(runHeldOut(ctx, m, set.valid, cfg.Window, cfg.Retain), cfg.Retain, cfg.MaxTables)
		}
		cfg.Logger.Info("train-atr epoch", "epoch", epoch, "loss", lastLoss, "bias", bias, "cut", cut,
			"valid_f1", st.F1, "valid_cr", st.CompleteRecall, "valid_tables", st.AvgTables)
		// Without held-out questions the last epoch is kept.
		if sc := objective(st); sc > bestScore || len(set.valid) == 0 {
			bestScore = sc
			best = clone(m)
			best.ThresholdBias = bias
			best.RelativeCut = cut
			best.Training.BestEpoch = epoch
			best.Training.TrainLoss = lastLoss
		}
	}
	if cfg.AverageEpochs > 0 {
		best = averageTail(ctx, snapshots, set, cfg, lastLoss)
	}
	best.Training.Seed = cfg.Seed
	best.Training.Epochs = cfg.Epochs
	best.Training.Questions = set.Questions
	best.Training.Unanswerable = set.NoAnswer
	best.Training.Windows = len(set.Train)
	best.Training.Embedder = set.Embedder
	best.Training.Candidates = 50
	best.Training.PoolDBs = cfg.PoolDBs
	chooseOperatingPoint(ctx, best, set, cfg)
	return best, nil
}

// averageTail returns the mean of the last cfg.AverageEpochs snapshots
// with its threshold bias and cut chosen on the held-out questions. It logs
// the held-out figures of other tail lengths too, so the choice of
// AverageEpochs can be read off one run.
func averageTail(ctx context.Context, snapshots []*retriever.LiteModel, set *TrainingSet, cfg TrainConfig, lastLoss float64) *retriever.LiteModel {
	var chosen *retriever.LiteModel
	for _, k := range []int{1, 2, 3, 4, 6, 8, len(snapshots)} {
		if k > len(snapshots) || (k != cfg.AverageEpochs && len(set.valid) == 0) {
			continue
		}
		avg := averageModels(snapshots[len(snapshots)-k:])
		if len(set.valid) > 0 {
			var st retriever.HeldOutStats
			avg.ThresholdBias, avg.RelativeCut, st = chooseBias(runHeldOut(ctx, avg, set.valid, cfg.Window, cfg.Retain), cfg.Retain, cfg.MaxTables)
			cfg.Logger.Info("train-atr averaged epochs", "last", k, "bias", avg.ThresholdBias, "cut", avg.RelativeCut,
				"valid_f1", st.F1, "valid_cr", st.CompleteRecall, "valid_tables", st.AvgTables, "objective", objective(st))
		}
		if k == min(cfg.AverageEpochs, len(snapshots)) && chosen == nil {
			chosen = avg
		}
	}
	chosen.Training.BestEpoch = len(snapshots)
	chosen.Training.AveragedEpochs = min(cfg.AverageEpochs, len(snapshots))
	chosen.Training.TrainLoss = lastLoss
	return chosen
}

// averageModels is the element-wise mean of ms' weights (same
// standardisation, so the mean of the parameters is a model of the same
// features).
func averageModels(ms []*retriever.LiteModel) *retriever.LiteModel {
	out := clone(ms[0])
	inv := 1 / float64(len(ms))
	scale := func(v []float64) {
		for k := range v {
			v[k] *= inv
		}
	}
	add := func(dst, src []float64) {
		for k := range dst {
			dst[k] += src[k]
		}
	}
	for _, m := range ms[1:] {
		for j := range out.W1 {
			add(out.W1[j], m.W1[j])
		}
		add(out.B1, m.B1)
		add(out.W2, m.W2)
		add(out.V, m.V)
		add(out.U, m.U)
		out.B2 += m.B2
	}
	for j := range out.W1 {
		scale(out.W1[j])
	}
	scale(out.B1)
	scale(out.W2)
	scale(out.V)
	scale(out.U)
	out.B2 *= inv
	return out
}

// Recalibrate keeps m's network and re-chooses its operating point
// (threshold bias, relative cut, expansion margins) on set's held-out
// questions by the rule Train uses after its last epoch: for a change of
// features or grids that leaves the network's ranking usable, without the
// epoch-to-epoch variance of a full retraining (docs/retrieval.md).
func Recalibrate(ctx context.Context, set *TrainingSet, m *retriever.LiteModel, cfg TrainConfig) (*retriever.LiteModel, error) {
	cfg = cfg.withDefaults()
	if len(set.valid) == 0 {
		return nil, fmt.Errorf("recalibrate: no held-out questions")
	}
	best := clone(m)
	best.ThresholdBias, best.RelativeCut = 0, 0
	best.ThresholdBias, best.RelativeCut, _ = chooseBias(runHeldOut(ctx, best, set.valid, cfg.Window, cfg.Retain), cfg.Retain, cfg.MaxTables)
	chooseOperatingPoint(ctx, best, set, cfg)
	best.Training.Data += "; operating point re-chosen by train-atr --recalibrate"
	if set.Embedder != "" {
		best.Training.Data += " with " + set.Embedder
	}
	best.Training.Data += cfg.splitNote() + cfg.MaxTables.note()
	// What was measured with other embedders was this network at its old
	// operating point. The new point was chosen, and its held-out figures
	// measured, with the training set's embedder: a pool of networks
	// trained on builtin-v1 recalibrated on words-v1 serves words-v1
	// without the warning of an untried pairing.
	best.Training.MeasuredWith = nil
	if set.Embedder != "" && set.Embedder != best.Training.Embedder {
		best.Training.MeasuredWith = []string{set.Embedder}
	}
	return best, nil
}

// chooseOperatingPoint records best's held-out figures and chooses its
// expansion margins.
func chooseOperatingPoint(ctx context.Context, best *retriever.LiteModel, set *TrainingSet, cfg TrainConfig) {
	if len(set.valid) > 0 {
		runs := runHeldOut(ctx, best, set.valid, cfg.Window, cfg.Retain)
		st := atrStats(runs, cfg.Retain, 0, 0)
		best.Training.HeldOutATR = &st
		cfg.Logger.Info("train-atr threshold", "epoch", best.Training.BestEpoch, "bias", best.ThresholdBias, "relative_cut", best.RelativeCut,
			"valid_f1", st.F1, "valid_cr", st.CompleteRecall, "valid_tables", st.AvgTables)
		var ex retriever.HeldOutStats
		best.Expansion, ex = chooseExpansion(ctx, best, set.valid, cfg)
		best.Training.HeldOutDefault = &ex
		best.Training.ValidF1 = ex.F1
	}
}

// accumulate adds one window's gradient to grads and returns its loss.
func accumulate(m *retriever.LiteModel, w *TrainWindow, grads [][]float64, x, h []float64) float64 {
	n := len(w.Pair)
	logits := make([]float64, n)
	hs := make([][]float64, n)
	xs := make([][]float64, n)
	for i, f := range w.Pair {
		logits[i] = m.PairLogit(f, x, h)
		hs[i] = append([]float64(nil), h...)
		xs[i] = append([]float64(nil), x...)
	}
	tf := append([]float64(nil), w.Thr...)
	retriever.SetLogitStats(tf, logits)
	thr := m.ThreshLogit(tf)
	loss, gl, gt := windowLoss(logits, thr, w.Gold, w.NoAnswer)
	gW1, gB1, gW2, gB2, gV, gU := grads[0], grads[1], grads[2], grads[3], grads[4], grads[5]
	P := retriever.NumPairFeatures
	for i := range w.Pair {
		g := gl[i]
		if g == 0 {
			continue
		}
		gB2[0] += g
		for k, v := range xs[i] {
			gU[k] += g * v
		}
		for j := 0; j < m.Hidden; j++ {
			gW2[j] += g * hs[i][j]
			da := g * m.W2[j] * (1 - hs[i][j]*hs[i][j])
			gB1[j] += da
			row := gW1[j*P : (j+1)*P]
			for k, v := range xs[i] {
				row[k] += da * v
			}
		}
	}
	for k, v := range tf {
		gV[k] += gt * (v - m.ThrMean[k]) / m.ThrStd[k]
	}
	return loss
}

// params exposes the weights as flat slices sharing storage with m (W1's
// rows are rebound onto one flat slice; b2 holds B2, copied back by the
// caller after each step); order matches accumulate's grads.
func params(m *retriever.LiteModel, b2 []float64) [][]float64 {
	return [][]float64{flatW1(m), m.B1, m.W2, b2, m.V, m.U}
}

func flatW1(m *retriever.LiteModel) []float64 {
	out := make([]float64, 0, m.Hidden*retriever.NumPairFeatures)
	for _, r := range m.W1 {
		out = append(out, r...)
	}
	// Rebind rows onto the flat slice so updates are shared.
	for j := range m.W1 {
		m.W1[j] = out[j*retriever.NumPairFeatures : (j+1)*retriever.NumPairFeatures : (j+1)*retriever.NumPairFeatures]
	}
	return out
}

func clone(m *retriever.LiteModel) *retriever.LiteModel {
	c := *m
	c.W1 = make([][]float64, len(m.W1))
	for j, r := range m.W1 {
		c.W1[j] = append([]float64(nil), r...)
	}
	c.B1 = append([]float64(nil), m.B1...)
	c.W2 = append([]float64(nil), m.W2...)
	c.V = append([]float64(nil), m.V...)
	c.U = append([]float64(nil), m.U...)
	return &c
}

// standardize returns each slot's mean and standard deviation over the
// windows' rows, and which slots never vary (their deviation is given as 1).
func standardize(ws []TrainWindow, rows func(TrainWindow) [][]float64, n int) (mean, std []float64, constant []bool) {
	mean = make([]float64, n)
	std = make([]float64, n)
	cnt := 0.0
	for _, w := range ws {
		for _, r := range rows(w) {
			for k, v := range r {
				mean[k] += v
			}
			cnt++
		}
	}
	for k := range mean {
		mean[k] /= cnt
	}
	for _, w := range ws {
		for _, r := range rows(w) {
			for k, v := range r {
				d := v - mean[k]
				std[k] += d * d
			}
		}
	}
	constant = make([]bool, n)
	for k := range std {
		std[k] = math.Sqrt(std[k] / cnt)
		if std[k] < 1e-9 {
			std[k], constant[k] = 1, true
		}
	}
	return mean, std, constant
}

// adam is the Adam optimiser over flat parameter slices.
type adam struct {
	lr, b1, b2, eps float64
	t               int
	m, v            [][]float64
}

func newAdam(params [][]float64, lr float64) *adam {
	a := &adam{lr: lr, b1: 0.9, b2: 0.999, eps: 1e-8}
	for _, p := range params {
		a.m = append(a.m, make([]float64, len(p)))
		a.v = append(a.v, make([]float64, len(p)))
	}
	return a
}

func (a *adam) step(params, grads [][]float64) {
	a.t++
	c1 := 1 - math.Pow(a.b1, float64(a.t))
	c2 := 1 - math.Pow(a.b2, float64(a.t))
	for i, p := range params {
		for k := range p {
			g := grads[i][k]
			a.m[i][k] = a.b1*a.m[i][k] + (1-a.b1)*g
			a.v[i][k] = a.b2*a.v[i][k] + (1-a.b2)*g*g
			p[k] -= a.lr * (a.m[i][k] / c1) / (math.Sqrt(a.v[i][k]/c2) + a.eps)
		}
	}
}

// heldOutRun is Algorithm 1's outcome for one held-out question.
type heldOutRun struct {
	res *retriever.ATRRun
	tq  *trainQuestion
}

// runHeldOut runs Algorithm 1 with m over the held-out questions.
func runHeldOut(ctx context.Context, m *retriever.LiteModel, qs []*trainQuestion, W, R int) []heldOutRun {
	runs := make([]heldOutRun, 0, len(qs))
	for _, tq := range qs {
		res, err := retriever.RunATR(ctx, m, tq.q, tq.cands, W, R)
		if err != nil {
			continue
		}
		runs = append(runs, heldOutRun{res, tq})
	}
	return runs
}

// objective is what held-out choices maximise: the mean of F1 and complete
// recall, the two figures the retriever is judged by.
func objective(s retriever.HeldOutStats) float64 { return (s.F1 + s.CompleteRecall) / 2 }

type heldOutAcc struct {
	n                      int
	p, r, f, cr, tab, gold float64
}

func (a *heldOutAcc) add(got []string, gold map[string]bool) {
	s := evaluate.ScoreSet(got, keys(gold))
	a.n++
	a.p += s.Precision
	a.r += s.Recall
	a.f += s.F1
	a.tab += float64(s.Returned)
	a.gold += float64(len(gold))
	if s.Complete {
		a.cr++
	}
}

func (a *heldOutAcc) stats() retriever.HeldOutStats {
	n := float64(max(a.n, 1))
	return retriever.HeldOutStats{Precision: a.p / n, Recall: a.r / n, CompleteRecall: a.cr / n, F1: a.f / n, AvgTables: a.tab / n, AvgGold: a.gold / n}
}

// atrStats scores Algorithm 1 with every threshold logit shifted by bias
// and raised by the relative cut.
func atrStats(runs []heldOutRun, R int, bias, cut float64) retriever.HeldOutStats {
	var a heldOutAcc
	for _, r := range runs {
		k := r.res.SelectedWith(R, bias, cut)
		got := make([]string, 0, k)
		for _, s := range r.res.Ranked[:k] {
			got = append(got, strings.ToLower(s.Table.QualifiedName()))
		}
		a.add(got, r.tq.gold)
	}
	return a.stats()
}

// biasGrid are the threshold shifts tried on the held-out questions.
var biasGrid = func() []float64 {
	var g []float64
	for b := -3.0; b <= 6.0001; b += 0.25 {
		g = append(g, math.Round(b*100)/100)
	}
	return g
}()

// cutGrid are the relative cuts tried (0: none); eighths around 1, where
// the held-out optimum of the Spider + Spider-Syn scorer lies.
var cutGrid = []float64{0, 0.25, 0.5, 0.75, 0.875, 1, 1.125, 1.25, 1.375, 1.5, 2, 2.5, 3, 4}

// chooseBias picks the threshold shift and relative cut that maximise the
// held-out objective of Algorithm 1 among the points whose average number
// of tables per question c admits (TableCap.admits with c.ATR; the zero
// TableCap admits any). Should c admit none, the point nearest its target
// is taken.
func chooseBias(runs []heldOutRun, R int, c TableCap) (bias, cut float64, best retriever.HeldOutStats) {
	bestScore := -1.0
	nearest := math.Inf(1)
	var nb, nc float64
	var nst retriever.HeldOutStats
	for _, rc := range cutGrid {
		for _, b := range biasGrid {
			st := atrStats(runs, R, b, rc)
			if d := math.Abs(st.AvgTables - c.ATR); d < nearest {
				nearest, nb, nc, nst = d, b, rc, st
			}
			if !c.admits(st, c.ATR) {
				continue
			}
			if sc := objective(st); sc > bestScore+1e-12 {
				bias, cut, best, bestScore = b, rc, st, sc
			}
		}
	}
	if bestScore < 0 {
		return nb, nc, nst
	}
	return bias, cut, best
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// expansionGrid are the margins tried for expansion (99: off).
var expansionGrid = []float64{-3, -2, -1.5, -1, -0.5, 0, 0.5, 99}

// coverGrid are the coverage-expansion margins tried, tightest first so that
// a tie keeps the more conservative margin (off unless one of them beats the
// margins chosen without it).
var coverGrid = []float64{0, -0.5, -1, -1.5, -2, -3, -4, -6}

// bandSeeds is how many margin settings the coverage stage starts from under
// a two-sided table bound. Coverage expansion only adds tables, so the
// margins alone may rightly sit below the band; judging them by the band on
// their own left only settings that overshoot with aggressive expansion and
// undo it by refinement (docs/retrieval.md, step 37).
const bandSeeds = 8

// chooseExpansion picks the expansion margins that maximise the mean of F1
// and complete recall of ATR + expansion on the held-out questions.
func chooseExpansion(ctx context.Context, m *retriever.LiteModel, qs []*trainQuestion, cfg TrainConfig) (*retriever.TrainedExpansion, retriever.HeldOutStats) {
	runs := runHeldOut(ctx, m, qs, cfg.Window, cfg.Retain)
	best, bestSt := pickExpansion(func(e retriever.ExpansionConfig) retriever.HeldOutStats { return expansionStats(runs, e) }, cfg.MaxTables)
	coverMargin := 99.0
	if best.CoverMargin != nil {
		coverMargin = *best.CoverMargin
	}
	cfg.Logger.Info("train-atr expansion margins", "expand", best.ExpandMargin, "restore", best.RestoreMargin, "refine", best.RefineMargin,
		"cover", coverMargin, "cover_gain", best.CoverGain,
		"valid_f1", bestSt.F1, "valid_cr", bestSt.CompleteRecall, "valid_tables", bestSt.AvgTables, "valid_gold", bestSt.AvgGold)
	return best, bestSt
}

// pickExpansion searches the expansion grids with eval (the held-out
// figures of ATR + expansion under a setting) for the setting of best
// objective that c admits.
func pickExpansion(eval func(retriever.ExpansionConfig) retriever.HeldOutStats, c TableCap) (*retriever.TrainedExpansion, retriever.HeldOutStats) {
	grid := expansionGrid
	type pick struct {
		ex    retriever.TrainedExpansion
		st    retriever.HeldOutStats
		score float64
	}
	// Margin stage: the best settings by the held-out objective among those
	// the bound admits (under a band, those not above it), best first; a
	// later setting displaces an earlier one only when strictly better, so
	// ties keep grid order.
	nSeeds := 1
	if c.Band > 0 && c.Expanded > 0 {
		nSeeds = bandSeeds
	}
	upTo := TableCap{ATR: c.ATR, Expanded: c.Expanded}
	if nSeeds > 1 {
		upTo.Expanded = c.Expanded + c.Band
	}
	var seeds []pick
	var nearest pick
	nearestD := math.Inf(1)
	for _, fm := range []float64{0, 1, 2, 3, 99} {
		for _, em := range grid {
			for _, rm := range grid {
				e := retriever.ExpansionConfig{ExpandMargin: &em, RestoreMargin: &rm, RefineMargin: &fm}.WithDefaults(nil)
				st := eval(e)
				p := pick{retriever.TrainedExpansion{ExpandMargin: em, RestoreMargin: rm, RefineMargin: fm}, st, objective(st)}
				if d := math.Abs(st.AvgTables - c.Expanded); d < nearestD {
					nearestD, nearest = d, p
				}
				if !upTo.admits(st, upTo.Expanded) {
					continue
				}
				i := len(seeds)
				for i > 0 && p.score > seeds[i-1].score+1e-12 {
					i--
				}
				if i < nSeeds {
					seeds = append(seeds[:i], append([]pick{p}, seeds[i:]...)...)
					if len(seeds) > nSeeds {
						seeds = seeds[:nSeeds]
					}
				}
			}
		}
	}
	// The bound admits no margins: those nearest its target.
	fallback := len(seeds) == 0
	if fallback {
		seeds = []pick{nearest}
	}
	best := &retriever.TrainedExpansion{ExpandMargin: 99, RestoreMargin: 99, RefineMargin: 99}
	var bestSt retriever.HeldOutStats
	bestScore := -1.0
	// Coverage expansion is chosen given the margins above (a joint grid
	// would be 50 times larger for the same choice on the held-out set).
	for _, s := range seeds {
		if (fallback || c.admits(s.st, c.Expanded)) && s.score > bestScore+1e-12 {
			ex := s.ex
			best, bestSt, bestScore = &ex, s.st, s.score
		}
		for _, cm := range coverGrid {
			for _, cg := range []float64{0.05, 0.1, 0.15, 0.2, 0.25} {
				em, rm, fm := s.ex.ExpandMargin, s.ex.RestoreMargin, s.ex.RefineMargin
				e := retriever.ExpansionConfig{ExpandMargin: &em, RestoreMargin: &rm, RefineMargin: &fm, CoverMargin: &cm, CoverGain: cg}.WithDefaults(nil)
				st := eval(e)
				if !c.admits(st, c.Expanded) {
					continue
				}
				if score := objective(st); score > bestScore+1e-12 {
					bestScore, bestSt = score, st
					cm := cm
					best = &retriever.TrainedExpansion{ExpandMargin: em, RestoreMargin: rm, RefineMargin: fm, CoverMargin: &cm, CoverGain: cg}
				}
			}
		}
	}
	if bestScore < 0 {
		// Nothing lands in the band: the margins nearest its target.
		ex := nearest.ex
		best, bestSt = &ex, nearest.st
	}
	return best, bestSt
}

// expansionStats scores ATR + expansion with e over held-out runs. Bridge
// tables outside the candidate list count as returned (a wrong guess)
// unless gold.
func expansionStats(runs []heldOutRun, e retriever.ExpansionConfig) retriever.HeldOutStats {
	var a heldOutAcc
	for _, r := range runs {
		chosen, err := r.tq.prep.ExpandRun(r.res, e)
		if err != nil {
			continue
		}
		got := make([]string, 0, len(chosen))
		for _, s := range chosen {
			got = append(got, strings.ToLower(s.Table.QualifiedName()))
		}
		a.add(got, r.tq.gold)
	}
	return a.stats()
}

// TrainJob is a whole `atrium train-atr` run.
type TrainJob struct {
	// BenchDir holds tables.json and train_spider.json.
	BenchDir string
	// ServerDSN names the PostgreSQL server; a scratch database
	// atrium_train_atr_<pid> is created there and dropped afterwards (named
	// per process so two training runs on one server do not collide).
	ServerDSN string
	// ExtraQuestions are more question files over the same tables.json
	// (Spider-Syn's train_spider.json: the same questions reworded with
	// synonyms), added to BenchDir's train_spider.json.
	ExtraQuestions []string
	// HoldOutEvery, when positive, leaves out of training every database
	// whose position in the sorted db_ids is HoldOutEvery/2 modulo
	// HoldOutEvery, so they can be evaluated as unseen schemas
	// (docs/retrieval.md).
	HoldOutEvery int
	// HoldOutShift moves the held-out positions on by that many places
	// (mine.HeldOutShifted): shifts 0 … HoldOutEvery−1 hold out disjoint
	// folds, for cross-validation. 0: the shipped split.
	HoldOutShift int
	// KeepDB leaves the scratch database in place.
	KeepDB bool
	// Recalibrate, when set, skips training: its network is kept and only
	// its operating point is chosen again (Recalibrate).
	Recalibrate *retriever.LiteModel
	// TablesLike, when set, bounds the operating point chosen (by training
	// or Recalibrate) by how many tables per held-out question this scorer
	// chooses at its own point, measured on the same questions at this
	// build's features: no more, or within Train.MaxTables.Band (TableCap).
	TablesLike *retriever.LiteModel
	// Embedder embeds the training catalog and questions; nil means
	// vocab.DefaultEmbedderKind's. The scorer's semantic features are
	// learned on its vectors, so it should be the embedder the weights will
	// serve with (its name is recorded in the weights' training data).
	Embedder catalog.Embedder
	Train    TrainConfig
	Logger   *slog.Logger
}

// RunTraining loads the training schemas into a scratch database, builds
// its catalog with the builtin embedder, and trains the lite scorer.
func RunTraining(ctx context.Context, job TrainJob) (*retriever.LiteModel, error) {
	log := job.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	job.Train.Logger = log
	bench, err := benchload.LoadBench(job.BenchDir, "train_spider.json")
	if err != nil {
		return nil, err
	}
	for _, f := range job.ExtraQuestions {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("read training questions: %w", err)
		}
		var qs []benchload.Question
		if err := json.Unmarshal(raw, &qs); err != nil {
			return nil, fmt.Errorf("decode %s: %w", f, err)
		}
		bench.Questions = append(bench.Questions, qs...)
	}
	held := HeldOutDBs(bench, job.HoldOutEvery, job.HoldOutShift)
	if len(held) > 0 {
		kept := bench.Questions[:0]
		for _, q := range bench.Questions {
			if !held[strings.ToLower(q.DBID)] {
				kept = append(kept, q)
			}
		}
		bench.Questions = kept
	}
	var mined []mine.Question
	if job.Train.LearnedPairsFolds > 0 {
		if mined, err = minedQuestions(job.ExtraQuestions, held); err != nil {
			return nil, err
		}
	}
	dsn, drop, err := benchload.DedicatedDB(ctx, job.ServerDSN, fmt.Sprintf("atrium_train_atr_%d", os.Getpid()))
	if err != nil {
		return nil, err
	}
	if !job.KeepDB {
		defer drop()
	}
	// Exact nearest neighbours while training: an HNSW graph depends on
	// insertion order, and the training run must be reproducible.
	pool, err := retriever.OpenPool(ctx, dsn, 100, map[string]string{"enable_indexscan": "off"})
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	if _, err := migrations.Up(ctx, pool, migrations.Options{Logger: log}); err != nil {
		return nil, fmt.Errorf("migrate training catalog: %w", err)
	}
	var ids []string
	seen := map[string]bool{}
	for _, q := range bench.Questions {
		if !seen[q.DBID] {
			seen[q.DBID] = true
			ids = append(ids, q.DBID)
		}
	}
	log.Info("train-atr: creating training schemas", "databases", len(ids))
	if _, err := benchload.Load(ctx, pool, job.BenchDir, benchload.Options{DBIDs: ids, Logger: log}); err != nil {
		return nil, fmt.Errorf("load training schemas: %w", err)
	}
	var variants map[string]*schemaVariant
	if job.Train.AugmentSchemas > 0 {
		if variants, err = loadVariants(ctx, pool, bench, ids, job.Train.Seed, log); err != nil {
			return nil, err
		}
	}
	emb := job.Embedder
	if emb == nil {
		if emb, err = vocab.NewDefaultEmbedder(); err != nil {
			return nil, err
		}
	}
	log.Info("train-atr: syncing the training catalog")
	if _, err := catalog.Sync(ctx, pool, catalog.SyncOptions{Embedder: emb, Logger: log}); err != nil {
		return nil, fmt.Errorf("sync training catalog: %w", err)
	}
	r := retriever.NewForTraining(pool, emb)
	var byDB map[string]*retriever.Retriever
	if k := job.Train.LearnedPairsFolds; k > 0 {
		var strict *benchload.Bench
		if job.Train.LearnedPairsStrict {
			strict = bench
		}
		if byDB, err = foldRetrievers(pool, emb, mined, ids, k, strict, log); err != nil {
			return nil, err
		}
	}
	set, err := buildTrainingSet(ctx, r, bench, job.Train, variants, byDB)
	if err != nil {
		return nil, err
	}
	log.Info("train-atr: training", "questions", set.Questions, "unanswerable", set.NoAnswer, "top50_complete", set.h1Complete, "windows", len(set.Train), "validation", len(set.valid))
	if job.TablesLike != nil {
		if job.Train.MaxTables, err = capOf(ctx, set, job.TablesLike, job.Train); err != nil {
			return nil, err
		}
		log.Info("train-atr: operating point bounded by the reference scorer's", "atr_tables", job.Train.MaxTables.ATR,
			"expanded_tables", job.Train.MaxTables.Expanded)
	}
	if job.Recalibrate != nil {
		return Recalibrate(ctx, set, job.Recalibrate, job.Train)
	}
	m, err := TrainEnsemble(ctx, set, job.Train)
	if err != nil {
		return nil, err
	}
	data := "spider train_spider.json"
	for _, f := range job.ExtraQuestions {
		data += " + " + filepath.Base(filepath.Dir(f)) + "/" + filepath.Base(f)
	}
	data += fmt.Sprintf(" (%d databases", len(ids))
	if job.Train.AugmentSchemas > 0 {
		data += fmt.Sprintf(", renamed copies for a share of %.2f", job.Train.AugmentSchemas)
	}
	if job.Train.VaryPool {
		data += ", pool size varied"
	}
	data += job.Train.splitNote()
	if job.Train.Unanswerable > 0 {
		data += fmt.Sprintf(", a share of %.2f also asked unanswerable", job.Train.Unanswerable)
	}
	if job.Train.LearnedPairsFolds > 0 {
		data += fmt.Sprintf(", learned pairs mined in %d folds by database", job.Train.LearnedPairsFolds)
		if job.Train.LearnedPairsStrict {
			data += " without the fold's schema words"
		}
	}
	if len(held) > 0 {
		data += fmt.Sprintf("; %d held out, one in %d by sorted db_id", len(held), job.HoldOutEvery)
		if job.HoldOutShift != 0 {
			data += fmt.Sprintf(" shifted by %d", job.HoldOutShift)
		}
	}
	m.Training.Data = data + "), leave-one-out literal values" + job.Train.MaxTables.note()
	return m, nil
}

// splitNote is how the validation split is recorded in the weights'
// training data (empty for the default, single questions).
func (c TrainConfig) splitNote() string {
	switch {
	case c.ValidByDB:
		return ", validation split by database"
	case c.ValidBySQL:
		return ", validation split by gold query"
	}
	return ""
}

// note is how a bounded choice is recorded in the weights' training data.
func (c TableCap) note() string {
	if c.ATR <= 0 && c.Expanded <= 0 {
		return ""
	}
	if c.Band > 0 {
		return fmt.Sprintf("; operating point within %.3f tables of %.3f by Algorithm 1, %.3f expanded", c.Band, c.ATR, c.Expanded)
	}
	return fmt.Sprintf("; operating point no looser than %.3f tables by Algorithm 1, %.3f expanded", c.ATR, c.Expanded)
}

// sqlKey normalises gold SQL for comparison (case and spacing).
func sqlKey(sql string) string { return strings.ToLower(strings.Join(strings.Fields(sql), " ")) }

// HeldOutDBs are the databases (lower-case db_ids) held out of training by
// TrainJob.HoldOutEvery and HoldOutShift: of the sorted db_ids of bench's
// questions, those at positions every/2 + shift modulo every. Nil when
// every <= 0.
func HeldOutDBs(bench *benchload.Bench, every, shift int) map[string]bool {
	ids := make([]string, len(bench.Questions))
	for i, q := range bench.Questions {
		ids[i] = q.DBID
	}
	return mine.HeldOutShifted(ids, every, shift)
}
