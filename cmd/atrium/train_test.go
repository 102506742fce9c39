package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTrainATRStrictNeedsFolds: strict pairs are a property of folds, so
// asking for them alone is a usage error, found before any database work.
func TestTrainATRStrictNeedsFolds(t *testing.T) {
	err := runTrainATR(context.Background(), envFrom(nil), []string{"--learned-pairs-strict", "--dsn", "postgres://nobody@127.0.0.1:1/none"})
	require.ErrorAs(t, err, new(usageError))
	require.ErrorContains(t, err, "--learned-pairs-folds")
}

// TestTrainATRShiftNeedsHoldOut: a shift names a fold of --hold-out-every,
// so it is checked before any database work.
func TestTrainATRShiftNeedsHoldOut(t *testing.T) {
	for _, args := range [][]string{
		{"--hold-out-shift", "1"},
		{"--hold-out-every", "7", "--hold-out-shift", "7"},
		{"--hold-out-every", "7", "--hold-out-shift", "-1"},
	} {
		err := runTrainATR(context.Background(), envFrom(nil), append(args, "--dsn", "postgres://nobody@127.0.0.1:1/none"))
		require.ErrorAs(t, err, new(usageError), "%v", args)
		require.ErrorContains(t, err, "--hold-out-shift")
	}
}

// TestTrainATRWeightsFilesChecked: every file --recalibrate pools and the
// --tables-like reference are read and checked before any database work,
// and the error names the file.
func TestTrainATRWeightsFilesChecked(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"format":"other"}`), 0o644))
	for _, args := range [][]string{
		{"--recalibrate", "../../retriever/lite_weights.json," + bad},
		{"--recalibrate", filepath.Join(dir, "missing.json")},
		{"--recalibrate", "../../retriever/lite_weights.json", "--tables-like", bad},
	} {
		err := runTrainATR(context.Background(), envFrom(nil), append(args, "--dsn", "postgres://nobody@127.0.0.1:1/none"))
		require.Error(t, err, "%v", args)
		require.NotContains(t, err.Error(), "127.0.0.1:1", "%v: failed before connecting", args)
		require.Contains(t, err.Error(), dir, "%v", args)
	}
}

// TestTrainATRBandNeedsReference: a band is around a reference's count.
func TestTrainATRBandNeedsReference(t *testing.T) {
	for _, args := range [][]string{
		{"--tables-band", "0.05"},
		{"--tables-like", "../../retriever/lite_weights.json", "--tables-band", "-1"},
	} {
		err := runTrainATR(context.Background(), envFrom(nil), append(args, "--dsn", "postgres://nobody@127.0.0.1:1/none"))
		require.ErrorAs(t, err, new(usageError), "%v", args)
		require.ErrorContains(t, err, "--tables-band")
	}
}

// The commands that own their catalog take the serving embedder flags, and
// name the kinds they know when given another, before any database work.
func TestUnknownEmbedderIsUsageError(t *testing.T) {
	for name, run := range map[string]func(context.Context, *cliEnv, []string) error{
		"train-atr": runTrainATR, "eval": runEval, "retrieve": runRetrieve,
	} {
		args := []string{"--embedder", "glove", "--dsn", "postgres://nobody@127.0.0.1:1/none", "--bench", "x"}
		if name == "retrieve" {
			args = []string{"--embedder", "glove", "--dsn", "postgres://nobody@127.0.0.1:1/none", "which tables?"}
		}
		err := run(context.Background(), envFrom(nil), args)
		require.ErrorAs(t, err, new(usageError), name)
		require.ErrorContains(t, err, "words, builtin, onnx or openai", name)
	}
}

// retrieve builds its scorer after it connects (an onnx scorer shares the
// onnx embedder's runtime), yet reports the scorer flags' usage errors
// before it tries the database.
func TestRetrieveScorerFlagsCheckedFirst(t *testing.T) {
	err := runRetrieve(context.Background(), envFrom(nil), []string{"--atr-scorer", "bert", "--dsn", "postgres://nobody@127.0.0.1:1/none", "which tables?"})
	require.ErrorAs(t, err, new(usageError))
	require.ErrorContains(t, err, "--atr-scorer")
}
