package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"

	"github.com/atriumdb/atrium/migrations"
)

// runMigrate creates or upgrades the atrium catalog schema.
func runMigrate(ctx context.Context, env *cliEnv, args []string) error {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	setUsage(env, fs, "atrium migrate --dsn DSN [--catalog-dsn DSN]",
		"Creates or upgrades the atrium catalog schema, each migration in its own transaction.")
	dsn := fs.String("dsn", "", "PostgreSQL connection URL of the catalog database (required)")
	catalogDSN := fs.String("catalog-dsn", "", "catalog database when it is not the one --dsn names (default: --dsn)")
	if _, err := parseFlags(ctx, env, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	target := *catalogDSN
	if target == "" {
		target = *dsn
	}
	if target == "" {
		return usageError{"--dsn is required"}
	}
	log := slog.New(slog.NewTextHandler(env.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	res, err := migrations.UpDSN(ctx, target, migrations.Options{Logger: log})
	if err != nil {
		return err
	}
	if len(res.Applied) == 0 {
		fmt.Fprintf(env.stdout, "catalog schema is up to date (version %d)\n", res.Current)
		return nil
	}
	for _, m := range res.Applied {
		fmt.Fprintf(env.stdout, "applied %s\n", m.Name)
	}
	fmt.Fprintf(env.stdout, "catalog schema is at version %d\n", res.Current)
	return nil
}
