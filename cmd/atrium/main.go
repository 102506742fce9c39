// Command atrium is a PostgreSQL wire-protocol proxy that answers
// natural-language questions from a catalog of the tables behind it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// command is one subcommand. run receives the arguments after its name.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *cliEnv, args []string) error
}

// cliEnv carries what every subcommand may use; it keeps main free of
// package-level state.
type cliEnv struct {
	stdout, stderr io.Writer
	getenv         func(string) string
}

func commands() []command {
	return []command{
		{"serve", "run the proxy in front of a PostgreSQL server", runServe},
		{"migrate", "create or upgrade the atrium catalog schema", runMigrate},
		{"catalog", "build and inspect the table catalog (sync, watch)", runCatalog},
		{"examples", "curate verified question→SQL examples (add, import, list, promote...)", runExamples},
		{"glossary", "curate the business glossary (add, list, review, remove)", runGlossary},
		{"retrieve", "show the tables Atrium would choose for a question", runRetrieve},
		{"eval", "measure table retrieval on a Spider-format benchmark", runEval},
		{"train-atr", "train the built-in ATR scorer and write its weights", runTrainATR},
		{"cache", "manage the result cache (flush)", runCache},
		{"config", "print the effective configuration (config print)", runConfig},
		{"version", "print the version", runVersion},
	}
}

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

func runVersion(_ context.Context, env *cliEnv, _ []string) error {
	fmt.Fprintln(env.stdout, "atrium", version)
	return nil
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "Atrium: a natural-language front door for PostgreSQL.\n\nUsage:\n  atrium <command> [flags]\n\nCommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "\nRun 'atrium <command> --help' for the flags of a command.\n")
}

func main() {
	os.Exit(run(os.Args[1:], &cliEnv{stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}))
}

func run(args []string, env *cliEnv) int {
	if len(args) == 0 {
		usage(env.stderr)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(env.stdout)
		return 0
	case "--version", "-version":
		args[0] = "version"
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, env, args[1:])
		switch {
		case err == nil:
			return 0
		case errors.Is(err, flag.ErrHelp):
			return 0
		default:
			fmt.Fprintf(env.stderr, "atrium %s: %v\n", c.name, err)
			var ue usageError
			if errors.As(err, &ue) {
				return 2
			}
			return 1
		}
	}
	fmt.Fprintf(env.stderr, "atrium: unknown command %q\n\n", args[0])
	usage(env.stderr)
	return 2
}

// usageError marks an error in how a command was called (exit status 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }
