// Package testdb gives tests their own throwaway PostgreSQL database and Redis
// database number on the real servers the test run uses.
//
// ATRIUM_TEST_PG names the server (default
// postgres://postgres@127.0.0.1:5432/postgres) and ATRIUM_TEST_REDIS the
// Redis server (default redis://127.0.0.1:6379/0).
package testdb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// AdminDSN is the DSN of the test server's maintenance database.
func AdminDSN() string {
	if s := os.Getenv("ATRIUM_TEST_PG"); s != "" {
		return s
	}
	return "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
}

// RedisURL is the URL of the test Redis server.
func RedisURL() string {
	if s := os.Getenv("ATRIUM_TEST_REDIS"); s != "" {
		return s
	}
	return "redis://127.0.0.1:6379/0"
}

// New creates an empty database with a unique name, runs setup statements in
// it (may be empty), and drops it when the test ends. It returns the new
// database's DSN. extensions are created first (e.g. "vector", "pg_trgm").
func New(t testing.TB, extensions ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin, err := pgx.Connect(ctx, AdminDSN())
	if err != nil {
		t.Fatalf("testdb: connect to %s: %v (is PostgreSQL running? `make test` starts it)", redact(AdminDSN()), err)
	}
	defer admin.Close(ctx)

	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "atrium_test_" + strings.ToLower(sanitize(t.Name())) + "_" + hex.EncodeToString(b[:])
	if len(name) > 63 {
		name = name[:50] + "_" + hex.EncodeToString(b[:])
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatalf("testdb: create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		admin, err := pgx.Connect(ctx, AdminDSN())
		if err != nil {
			t.Logf("testdb: drop %s: %v", name, err)
			return
		}
		defer admin.Close(ctx)
		if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			t.Logf("testdb: drop %s: %v", name, err)
		}
	})

	u, err := url.Parse(AdminDSN())
	if err != nil {
		t.Fatalf("testdb: parse ATRIUM_TEST_PG: %v", err)
	}
	u.Path = "/" + name
	dsn := u.String()
	if len(extensions) > 0 {
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatalf("testdb: connect to %s: %v", name, err)
		}
		defer c.Close(ctx)
		for _, e := range extensions {
			if _, err := c.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS "+pgx.Identifier{e}.Sanitize()); err != nil {
				t.Fatalf("testdb: create extension %s: %v", e, err)
			}
		}
	}
	return dsn
}

func sanitize(s string) string {
	var sb strings.Builder
	for _, r := range s {
		if (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			sb.WriteRune(r)
		} else {
			sb.WriteByte('_')
		}
		if sb.Len() >= 30 {
			break
		}
	}
	return sb.String()
}

func redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "(unparsable DSN)"
	}
	return u.Redacted()
}
