package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/test/testdb"
)

func TestMigrateAndCatalogSyncCommands(t *testing.T) {
	dsn := testdb.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, `CREATE TABLE singer (singer_id int PRIMARY KEY, name text);
		CREATE TABLE concert (id int PRIMARY KEY, singer_id int REFERENCES singer)`)
	require.NoError(t, err)

	var out, errb bytes.Buffer
	env := &cliEnv{stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}

	require.ErrorIs(t, runMigrate(ctx, env, []string{"--help"}), flag.ErrHelp)
	require.Contains(t, errb.String(), "-dsn")
	var ue usageError
	require.True(t, errors.As(runMigrate(ctx, env, nil), &ue))

	require.NoError(t, runMigrate(ctx, env, []string{"--dsn", dsn}))
	require.Contains(t, out.String(), "applied 0001_catalog.sql")
	out.Reset()
	require.NoError(t, runMigrate(ctx, env, []string{"--dsn", dsn}))
	require.Contains(t, out.String(), "up to date")

	out.Reset()
	require.NoError(t, runCatalog(ctx, env, []string{"sync", "--dsn", dsn, "--progress", "never"}))
	require.Contains(t, out.String(), "2 relations, 2 rebuilt")
	out.Reset()
	require.NoError(t, runCatalog(ctx, env, []string{"sync", "--dsn", dsn}))
	require.Contains(t, out.String(), "0 rebuilt, 2 unchanged")

	require.True(t, errors.As(runCatalog(ctx, env, []string{"sync", "--dsn", dsn, "--embedder", "nope"}), &ue))
	require.True(t, errors.As(runCatalog(ctx, env, []string{"frobnicate"}), &ue))
	require.True(t, errors.As(runCatalog(ctx, env, []string{"sync"}), &ue))
}
