package atrtrain

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"

	"github.com/atriumdb/atrium/retriever"
)

// TrainEnsemble trains cfg.Members networks on set from the seeds
// cfg.Seed, cfg.Seed+1, … (each as Train would, on the same windows) and
// returns their ensemble with one operating point chosen for it on the
// held-out questions. One network's held-out figures move by several
// points of F1 with the seed alone; the mean of the members' logits is
// steadier and, on the seven cross-validation folds, better than its
// members (docs/retrieval.md, step 11). Members train in parallel, up to
// GOMAXPROCS at a time.
func TrainEnsemble(ctx context.Context, set *TrainingSet, cfg TrainConfig) (*retriever.LiteModel, error) {
	cfg = cfg.withDefaults()
	n := max(cfg.Members, 1)
	members := make([]*retriever.LiteModel, n)
	errs := make([]error, n)
	sem := make(chan struct{}, max(runtime.GOMAXPROCS(0), 1))
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			mc := cfg
			mc.Seed = cfg.Seed + uint64(i)
			mc.Logger = cfg.Logger.With("member", i, "seed", mc.Seed)
			members[i], errs[i] = Train(ctx, set, mc)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("ensemble member %d (seed %d): %w", i, cfg.Seed+uint64(i), err)
		}
	}
	if n == 1 {
		return members[0], nil
	}
	return ensembleOf(ctx, members, set, cfg)
}

// ensembleOf makes members (trained networks) one ensemble model and
// chooses its operating point as Train chooses a network's: threshold bias
// and relative cut on the held-out questions, then the expansion margins.
func ensembleOf(ctx context.Context, members []*retriever.LiteModel, set *TrainingSet, cfg TrainConfig) (*retriever.LiteModel, error) {
	e := &retriever.LiteModel{Format: retriever.LiteFormat, PairFeatures: retriever.NumPairFeatures, ThreshFeatures: retriever.NumThreshFeatures}
	for _, m := range members {
		e.Members = append(e.Members, asMember(m))
	}
	first := members[0].Training
	e.Training = retriever.TrainInfo{Seed: first.Seed, Epochs: first.Epochs, Questions: first.Questions, Windows: first.Windows,
		Embedder: first.Embedder, Candidates: first.Candidates, PoolDBs: first.PoolDBs}
	if len(set.valid) == 0 {
		return e, nil
	}
	var st retriever.HeldOutStats
	e.ThresholdBias, e.RelativeCut, st = chooseBias(runHeldOut(ctx, e, set.valid, cfg.Window, cfg.Retain), cfg.Retain, cfg.MaxTables)
	cfg.Logger.Info("train-atr ensemble", "members", len(members), "bias", e.ThresholdBias, "cut", e.RelativeCut,
		"valid_f1", st.F1, "valid_cr", st.CompleteRecall, "valid_tables", st.AvgTables)
	chooseOperatingPoint(ctx, e, set, cfg)
	return e, nil
}

// Pool makes one ensemble of the networks of models (an ensemble
// contributes its members, a plain network itself), with no operating
// point yet: Recalibrate chooses it. Networks trained apart, at different
// commits or seeds, average as those trained together do (docs/retrieval.md,
// step 19). The first model's training record is kept.
func Pool(models ...*retriever.LiteModel) (*retriever.LiteModel, error) {
	if len(models) == 0 {
		return nil, fmt.Errorf("pool: no networks")
	}
	e := &retriever.LiteModel{Format: retriever.LiteFormat, PairFeatures: retriever.NumPairFeatures, ThreshFeatures: retriever.NumThreshFeatures}
	for i, m := range models {
		if m.Abstain != nil {
			// Whose abstention would the pool keep? Pool the ranking
			// networks alone and add an abstention model afterwards.
			return nil, fmt.Errorf("pool: model %d has an abstention model", i)
		}
		nets := m.Members
		if len(nets) == 0 {
			nets = []*retriever.LiteModel{m}
		}
		for _, n := range nets {
			if len(n.Members) > 0 {
				return nil, fmt.Errorf("pool: model %d nests ensembles", i)
			}
			e.Members = append(e.Members, asMember(n))
		}
	}
	e.Training = models[0].Training
	e.Training.HeldOutATR, e.Training.HeldOutDefault = nil, nil
	e.Training.MeasuredWith = nil // measured for the first file's ensemble, not this one
	e.Training.Data += fmt.Sprintf("; networks of %d weights files pooled (%d members", len(models), len(e.Members))
	// The pool keeps the first file's embedder as its own; a mixed pool
	// says so, since its members' vectors were not all of that kind.
	if kinds := memberEmbedders(e.Members); len(kinds) > 1 {
		e.Training.Data += ", trained with " + strings.Join(kinds, ", ")
	}
	e.Training.Data += ")"
	if len(e.Members) == 1 {
		only := e.Members[0]
		only.Training = e.Training
		return only, nil
	}
	return e, nil
}

// memberEmbedders counts the members' training embedders, in order of
// first appearance: "builtin-v1 (4)", "words-v1 (4)".
func memberEmbedders(members []*retriever.LiteModel) []string {
	var order []string
	n := map[string]int{}
	for _, m := range members {
		k := m.Training.Embedder
		if k == "" {
			k = "an unrecorded embedder"
		}
		if n[k] == 0 {
			order = append(order, k)
		}
		n[k]++
	}
	for i, k := range order {
		order[i] = fmt.Sprintf("%s (%d)", k, n[k])
	}
	return order
}

// asMember is a copy of network n as an ensemble member: without an
// operating point of its own, which the ensemble's replaces.
func asMember(n *retriever.LiteModel) *retriever.LiteModel {
	p := clone(n)
	p.ThresholdBias, p.RelativeCut, p.Expansion = 0, 0, nil
	p.Training.HeldOutDefault = nil
	return p
}
