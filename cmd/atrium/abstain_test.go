package main

import (
	"context"
	"flag"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/retriever"
)

// The abstention floors are flags of every command that retrieves, checked
// before any database work: a bad value is a usage error naming the flag.
func TestAbstainFlags(t *testing.T) {
	for name, run := range map[string]func(context.Context, *cliEnv, []string) error{
		"eval": runEval, "retrieve": runRetrieve, "serve": runServe,
	} {
		for _, bad := range [][]string{
			{"--abstain-floor", "low"}, {"--abstain-floor", "+inf"}, {"--abstain-floor", "NaN"},
			{"--abstain-coverage", "-0.1"}, {"--abstain-coverage", "1.5"}, {"--abstain-coverage", "most"},
		} {
			args := append(bad, "--dsn", "postgres://nobody@127.0.0.1:1/none")
			switch name {
			case "retrieve":
				args = append(args, "which tables?")
			case "eval":
				args = append(args, "--bench", "x")
			case "serve":
				args = append(bad, "--catalog-dsn", "postgres://nobody@127.0.0.1:1/none", "--listen", "127.0.0.1:0")
			}
			err := run(context.Background(), envFrom(nil), args)
			require.ErrorAs(t, err, new(usageError), "%s %v", name, bad)
			require.ErrorContains(t, err, bad[0], "%s %v", name, bad)
		}
	}
	var cfg retriever.Config
	f := addAbstainFlags(flag.NewFlagSet("x", flag.ContinueOnError))
	require.NoError(t, f.apply(&cfg))
	require.Nil(t, cfg.AbstainFloor, "unset flags keep the retriever's defaults")
	require.Nil(t, cfg.AbstainCoverage)
	*f.floor, *f.coverage = "-inf", "0"
	require.NoError(t, f.apply(&cfg))
	require.True(t, math.IsInf(*cfg.AbstainFloor, -1))
	require.Zero(t, *cfg.AbstainCoverage)
}
