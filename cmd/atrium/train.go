package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/atriumdb/atrium/catalog/benchload"
	"github.com/atriumdb/atrium/retriever"
	"github.com/atriumdb/atrium/retriever/atrtrain"
	"github.com/atriumdb/atrium/retriever/vocab/mine"
)

// runTrainATR trains the built-in lite ATR scorer on Spider's training split
// and writes its weights (retriever/lite_weights.json is the shipped copy,
// embedded in the binary).
func runTrainATR(ctx context.Context, env *cliEnv, args []string) error {
	fs := flag.NewFlagSet("train-atr", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	setUsage(env, fs, "atrium train-atr [--bench DIR] [--out FILE] [flags]",
		"Trains the built-in (lite) ATR scorer on a benchmark's training questions and writes its weights.")
	bench := fs.String("bench", "../shared/bench/spider", "directory with tables.json and train_spider.json")
	dsn := fs.String("dsn", benchload.DefaultServerDSN, "PostgreSQL server; a scratch database atrium_train_atr_<pid> is created there")
	out := fs.String("out", "retriever/lite_weights.json", "file the weights are written to")
	seed := fs.Uint64("seed", 1, "random seed (the shipped weights use 1)")
	epochs := fs.Int("epochs", 12, "training epochs")
	limit := fs.Int("limit", 0, "use only this many training questions (0: all)")
	extra := fs.String("extra-questions", "", "comma-separated question files over the same tables.json added to train_spider.json (the shipped weights use ../shared/bench/spider-syn/train_spider.json)")
	holdOut := fs.Int("hold-out-every", 0, "leave one in N training databases (by sorted db_id) out of training, for held-out evaluation (the shipped weights use 7)")
	shift := fs.Int("hold-out-shift", 0, "with --hold-out-every N, hold out the databases that many positions after the default ones: shifts 0 … N-1 are N disjoint folds, for cross-validation (0: the shipped split)")
	avg := fs.Int("average-epochs", 0, "make the model the mean of the last N epochs' weights instead of the single epoch with the best held-out objective (0: best epoch)")
	augment := fs.Float64("augment-schemas", 0, "share of training questions asked against a renamed copy of their database (synonyms, abbreviations, unseparated words), and of pool databases drawn renamed (0: none)")
	varyPool := fs.Bool("vary-pool", false, "draw each training question's pool size between a quarter and twice the default 20 databases")
	validByDB := fs.Bool("valid-by-db", false, "choose the epoch and operating point on the questions of 15% of the training databases (seeded) instead of 15% of the questions")
	validBySQL := fs.Bool("valid-by-sql", false, "hold out whole groups of questions with the same database and gold query (a query's paraphrases and their Spider-Syn rewordings) for choosing the epoch and operating point, instead of single questions whose siblings stay in training")
	pairFolds := fs.Int("learned-pairs-folds", 0, "prepare the training questions of each of N folds of the training databases with vocabulary learned pairs mined from the other folds' Spider-Syn questions (the --extra-questions files with spider_question) instead of the embedded pairs (0: embedded)")
	pairsStrict := fs.Bool("learned-pairs-strict", false, "with --learned-pairs-folds, also drop a fold's learned pairs whose schema word the fold's databases carry, so its questions' rewordings are as new to the pairs as a dev set's")
	unanswerable := fs.Float64("unanswerable", 0, "share of training questions also asked, with no table to find, against a pool without their database; the threshold learns to beat every table there (0: none)")
	members := fs.Int("members", 1, "train this many networks (seeds --seed, --seed+1, …) on the same data, in parallel, and ship their ensemble: logits averaged, one operating point chosen for the mean (the shipped weights are a 4-member ensemble)")
	recal := fs.String("recalibrate", "", "weights file(s), comma-separated, whose networks are kept (several files: pooled into one ensemble): only the operating point (threshold bias, relative cut, expansion margins) is chosen again on the held-out training questions")
	like := fs.String("tables-like", "", "weights file whose operating point bounds the one chosen: on the held-out training questions, no more tables per question than it chooses, by Algorithm 1 and after expansion (with --tables-band, about as many)")
	band := fs.Float64("tables-band", 0, "with --tables-like, admit only points within this many tables per question of the reference's, above or below (0: no more than the reference's)")
	keep := fs.Bool("keep-db", false, "keep the scratch database")
	verbose := fs.Bool("verbose", false, "log progress")
	embed := embedderFlags(fs, env.getenv)
	if _, err := parseFlags(ctx, env, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	if !mine.ValidShift(*holdOut, *shift) {
		return usageError{"--hold-out-shift needs --hold-out-every N and a shift from 0 to N-1"}
	}
	if *validByDB && *validBySQL {
		return usageError{"--valid-by-db and --valid-by-sql are two ways of splitting; choose one"}
	}
	if *members < 1 || *members > 64 {
		return usageError{"--members must be from 1 to 64"}
	}
	if *band < 0 || (*band > 0 && *like == "") {
		return usageError{"--tables-band needs --tables-like and a band of 0 or more tables"}
	}
	if *unanswerable < 0 || *unanswerable > 1 {
		return usageError{"--unanswerable must be a share from 0 to 1"}
	}
	if *pairsStrict && *pairFolds <= 0 {
		return usageError{"--learned-pairs-strict needs --learned-pairs-folds"}
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelInfo
	}
	log := slog.New(slog.NewTextHandler(env.stderr, &slog.HandlerOptions{Level: level}))
	var extras []string
	for _, f := range strings.Split(*extra, ",") {
		if f = strings.TrimSpace(f); f != "" {
			extras = append(extras, f)
		}
	}
	emb, closeEmb, err := buildEmbedder(embed(), log)
	if err != nil {
		return err
	}
	defer closeEmb()
	var base, ref *retriever.LiteModel
	if *recal != "" {
		var nets []*retriever.LiteModel
		for _, f := range strings.Split(*recal, ",") {
			if f = strings.TrimSpace(f); f == "" {
				continue
			}
			m, err := readWeights(f)
			if err != nil {
				return fmt.Errorf("weights to recalibrate: %w", err)
			}
			nets = append(nets, m)
		}
		if len(nets) == 1 {
			base = nets[0]
		} else if base, err = atrtrain.Pool(nets...); err != nil {
			return fmt.Errorf("weights to recalibrate: %w", err)
		}
	}
	if *like != "" {
		if ref, err = readWeights(*like); err != nil {
			return fmt.Errorf("--tables-like: %w", err)
		}
	}
	m, err := atrtrain.RunTraining(ctx, atrtrain.TrainJob{
		Recalibrate: base, TablesLike: ref, Embedder: emb,
		BenchDir: *bench, ServerDSN: *dsn, KeepDB: *keep, Logger: log, HoldOutEvery: *holdOut, HoldOutShift: *shift,
		ExtraQuestions: extras,
		Train: atrtrain.TrainConfig{Seed: *seed, Epochs: *epochs, Limit: *limit, AverageEpochs: *avg,
			AugmentSchemas: *augment, VaryPool: *varyPool, ValidByDB: *validByDB, ValidBySQL: *validBySQL, LearnedPairsFolds: *pairFolds, LearnedPairsStrict: *pairsStrict, Members: *members,
			Unanswerable: *unanswerable,
			MaxTables:    atrtrain.TableCap{Band: *band}},
	})
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(*out, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write weights: %w", err)
	}
	if len(m.Members) > 0 {
		fmt.Fprintf(env.stdout, "wrote %s: %d questions, %d windows, ensemble of %d networks, held-out F1 %.3f\n",
			*out, m.Training.Questions, m.Training.Windows, len(m.Members), m.Training.ValidF1)
		return nil
	}
	fmt.Fprintf(env.stdout, "wrote %s: %d questions, %d windows, best epoch %d, held-out F1 %.3f\n",
		*out, m.Training.Questions, m.Training.Windows, m.Training.BestEpoch, m.Training.ValidF1)
	return nil
}

// readWeights reads and checks a lite weights file.
func readWeights(path string) (*retriever.LiteModel, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m, err := retriever.ParseLiteModel(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}
