package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/atriumdb/atrium/proxy/resultcache"
)

// runCache dispatches `atrium cache flush`.
func runCache(ctx context.Context, env *cliEnv, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintf(env.stderr, "Usage:\n  atrium cache flush --redis URL   delete every cached answer (rows and SQL)\n\nRun 'atrium cache flush --help' for the flags.\n")
		if len(args) == 0 {
			return usageError{"cache needs a subcommand: flush"}
		}
		return flag.ErrHelp
	}
	switch args[0] {
	case "flush":
		return runCacheFlush(ctx, env, args[1:])
	default:
		return usageError{fmt.Sprintf("unknown cache subcommand %q (want flush)", args[0])}
	}
}

// runCacheFlush deletes Atrium's keys (and only those) from the Redis that
// `atrium serve --redis` uses. The in-process cache of a serve started
// without --redis lives and dies with that process.
func runCacheFlush(ctx context.Context, env *cliEnv, args []string) error {
	fs := flag.NewFlagSet("cache flush", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	setUsage(env, fs, "atrium cache flush --redis URL [--timeout D]",
		"Deletes Atrium's cached query results (its own keys only) from the result cache.")
	redisURL := fs.String("redis", "", "`URL` of the result cache: redis://host:port/db, rediss://, redis+cluster://host:port?addr=..., redis+sentinel://host:port?master_name=... (required)")
	timeout := fs.Duration("timeout", time.Minute, "give up after this long")
	if _, err := parseFlags(ctx, env, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	if *redisURL == "" {
		return usageError{"--redis is required (a serve without --redis keeps its cache in its own memory; restart it to empty it)"}
	}
	client, err := resultcache.OpenRedis(*redisURL)
	if err != nil {
		return usageError{err.Error()}
	}
	store := resultcache.NewRedis(client)
	defer store.Close()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	n, err := store.Flush(ctx, resultcache.KeyPrefix)
	if err != nil {
		return fmt.Errorf("flush the result cache: %w", err)
	}
	fmt.Fprintf(env.stdout, "deleted %d cached entries\n", n)
	return nil
}
