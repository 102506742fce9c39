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
