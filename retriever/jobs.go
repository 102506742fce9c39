package retriever

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	pgxvec "github.com/pgvector/pgvector-go/pgx"

	"github.com/atriumdb/atrium/catalog"
	"github.com/atriumdb/atrium/catalog/benchload"
	"github.com/atriumdb/atrium/migrations"
)

// DefaultServerDSN is the PostgreSQL server evaluation and training use when
// none is given.
const DefaultServerDSN = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// dedicatedDB (re)creates database name on the server of serverDSN and
// returns its DSN and a function that drops it.
func dedicatedDB(ctx context.Context, serverDSN, name string) (string, func(), error) {
	if serverDSN == "" {
		serverDSN = DefaultServerDSN
	}
	admin, err := pgx.Connect(ctx, serverDSN)
	if err != nil {
		return "", nil, fmt.Errorf("connect to %s: %w", redactDSN(serverDSN), err)
	}
	defer admin.Close(context.WithoutCancel(ctx))
	id := pgx.Identifier{name}.Sanitize()
	if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+id+" WITH (FORCE)"); err != nil {
		return "", nil, fmt.Errorf("drop old %s: %w", name, err)
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+id); err != nil {
		return "", nil, fmt.Errorf("create database %s: %w", name, err)
	}
	dsn, err := withDatabase(serverDSN, name)
	if err != nil {
		return "", nil, err
	}
	drop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		c, err := pgx.Connect(ctx, serverDSN)
		if err != nil {
			return
		}
		defer c.Close(ctx)
		_, _ = c.Exec(ctx, "DROP DATABASE IF EXISTS "+id+" WITH (FORCE)")
	}
	return dsn, drop, nil
}

func withDatabase(dsn, name string) (string, error) {
	if strings.Contains(dsn, "://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", fmt.Errorf("parse DSN: %w", err)
		}
		u.Path = "/" + name
		return u.String(), nil
	}
	return dsn + " dbname=" + name, nil
}

func redactDSN(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.Scheme != "" {
		return u.Redacted()
	}
	return "(DSN)"
}

// OpenPool connects to dsn with the session settings retrieval needs and
// pgvector's types registered on every connection (see RegisterVectorTypes).
func OpenPool(ctx context.Context, dsn string, perList int, extra map[string]string) (*pgxpool.Pool, error) {
	pc, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("parse DSN: %w", err)
	}
	ConfigurePool(pc, perList)
	for k, v := range extra {
		pc.ConnConfig.RuntimeParams[k] = v
	}
	ConfigureVectorTypes(pc)

	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", redactDSN(dsn), err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to %s: %w", redactDSN(dsn), err)
	}
	return pool, nil
}

// ConfigureVectorTypes makes every connection of pools built from pc carry
// pgvector's codecs: RegisterVectorTypes after connecting and, because a
// pool may be opened on a database before `CREATE EXTENSION vector` (eval
// and train-atr migrate after connecting), again before each acquire until
// the connection has them (no round trip once it does).
func ConfigureVectorTypes(pc *pgxpool.Config) {
	pc.AfterConnect = RegisterVectorTypes
	pc.PrepareConn = func(ctx context.Context, conn *pgx.Conn) (bool, error) {
		if err := RegisterVectorTypes(ctx, conn); err != nil {
			return false, err
		}
		return true, nil
	}
}

// RegisterVectorTypes registers pgvector's vector, halfvec and sparsevec
// codecs on conn, so pgvector.Vector values travel in binary (COPY needs
// this: without the codec pgx sends a vector as text in a binary COPY and
// the server reads garbage dimensions). It is a no-op when conn already has
// them, and when the vector extension is not installed in the database yet
// (its types become available after `CREATE EXTENSION vector`, e.g. through
// migrations); any other failure is returned. Suitable as
// pgxpool.Config.AfterConnect.
func RegisterVectorTypes(ctx context.Context, conn *pgx.Conn) error {
	if _, ok := conn.TypeMap().TypeForName("vector"); ok {
		return nil
	}
	var present bool
	if err := conn.QueryRow(ctx, "SELECT to_regtype('vector') IS NOT NULL").Scan(&present); err != nil {
		return fmt.Errorf("look up the pgvector type: %w", err)
	}
	if !present {
		return nil
	}
	if err := pgxvec.RegisterTypes(ctx, conn); err != nil {
		return fmt.Errorf("register pgvector types: %w", err)
	}
	return nil
}

// TrainJob is a whole `atrium train-atr` run.
type TrainJob struct {
	// BenchDir holds tables.json and train_spider.json.
	BenchDir string
	// ServerDSN names the PostgreSQL server; a scratch database
	// atrium_train_atr_<pid> is created there and dropped afterwards (named
	// per process so two training runs on one server do not collide).
	ServerDSN string
	// KeepDB leaves the scratch database in place.
	KeepDB bool
	Train  TrainConfig
	Logger *slog.Logger
}

// RunTraining loads the training schemas into a scratch database, builds
// its catalog with the builtin embedder, and trains the lite scorer.
func RunTraining(ctx context.Context, job TrainJob) (*LiteModel, error) {
	log := job.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	job.Train.Logger = log
	bench, err := LoadBench(job.BenchDir, "train_spider.json")
	if err != nil {
		return nil, err
	}
	dsn, drop, err := dedicatedDB(ctx, job.ServerDSN, fmt.Sprintf("atrium_train_atr_%d", os.Getpid()))
	if err != nil {
		return nil, err
	}
	if !job.KeepDB {
		defer drop()
	}
	// Exact nearest neighbours while training: an HNSW graph depends on
	// insertion order, and the training run must be reproducible.
	pool, err := OpenPool(ctx, dsn, 100, map[string]string{"enable_indexscan": "off"})
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	if _, err := migrations.Up(ctx, pool, migrations.Options{Logger: log}); err != nil {
		return nil, fmt.Errorf("migrate training catalog: %w", err)
	}
	var ids []string
	seen := map[string]bool{}
	for _, q := range bench.Questions {
		if !seen[q.DBID] {
			seen[q.DBID] = true
			ids = append(ids, q.DBID)
		}
	}
	log.Info("train-atr: creating training schemas", "databases", len(ids))
	if _, err := benchload.Load(ctx, pool, job.BenchDir, benchload.Options{DBIDs: ids, Logger: log}); err != nil {
		return nil, fmt.Errorf("load training schemas: %w", err)
	}
	emb := catalog.NewBuiltinEmbedder(0)
	log.Info("train-atr: syncing the training catalog")
	if _, err := catalog.Sync(ctx, pool, catalog.SyncOptions{Embedder: emb, Logger: log}); err != nil {
		return nil, fmt.Errorf("sync training catalog: %w", err)
	}
	r, err := newForTraining(pool, emb)
	if err != nil {
		return nil, err
	}
	set, err := BuildTrainingSet(ctx, r, bench, job.Train)
	if err != nil {
		return nil, err
	}
	log.Info("train-atr: training", "questions", set.Questions, "top50_complete", set.h1Complete, "windows", len(set.Train), "validation", len(set.valid))
	m, err := Train(ctx, set, job.Train)
	if err != nil {
		return nil, err
	}
	m.Training.Data = "spider train_spider.json (" + fmt.Sprint(len(ids)) + " databases), leave-one-out literal values"
	return m, nil
}

// newForTraining builds a retriever whose scorer is irrelevant (training
// only uses the hybrid stage), so it works before any weights exist.
func newForTraining(pool *pgxpool.Pool, emb Embedder) (*Retriever, error) {
	placeholder := &LiteModel{}
	r := &Retriever{db: pool, cfg: Config{}.withDefaults(), emb: emb, sc: placeholder, lite: placeholder}
	r.log = slog.New(slog.DiscardHandler)
	return r, nil
}
