package main

import (
	"context"
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
