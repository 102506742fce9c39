package catalog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	pgxvec "github.com/pgvector/pgvector-go/pgx"

	"github.com/atriumdb/atrium/migrations"
)

// Advisory lock keys under migrations.LockClass.
const syncLockKey = 2

// ErrSyncInProgress is returned when another sync holds the catalog's
// advisory lock and SyncOptions.Wait is false.
var ErrSyncInProgress = errors.New("catalog: another catalog sync is running on this catalog (use --wait to wait for it)")

// ErrNotMigrated is returned when the catalog schema is missing or older
// than this binary and SyncOptions.AutoMigrate is false.
var ErrNotMigrated = errors.New("catalog: the atrium catalog schema is missing or out of date; run `atrium migrate`")

// SyncOptions configures Sync. The zero value plus Source is a complete
// configuration: builtin embedder, no LLM, every non-system schema.
type SyncOptions struct {
	// Source is the database whose tables are catalogued; nil means the
	// catalog pool passed to Sync.
	Source *pgxpool.Pool
	// Schemas are comma-separated glob patterns (path.Match) of schemas to
	// catalogue; empty means all. atrium, pg_catalog and
	// information_schema are never catalogued.
	Schemas []string
	// Exclude are glob patterns of schemas, or of schema.table when they
	// contain a dot, to leave out.
	Exclude []string
	// Embedder embeds documents and columns; nil means the builtin one at
	// its default dimension.
	Embedder Embedder
	// LLM writes purposes and column descriptions; nil means none.
	LLM Describer
	// Glossary proposes glossary entries from the comments of each table
	// the LLM describes (only tables with a table or column COMMENT, once
	// per change of the table); nil means none. Proposals are stored in
	// atrium.glossary unreviewed (source llm), never over an existing term.
	// Used only with LLM.
	Glossary GlossaryProposer
	// LLMConcurrency bounds concurrent Describe calls (default 4, or the
	// describer's Concurrency() when it has one).
	LLMConcurrency int
	// LLMTimeout bounds one Describe call (default 60s); a table whose call
	// fails or times out is written without descriptions and retried by the
	// next sync.
	LLMTimeout time.Duration
	// Logger receives a summary and warnings; nil discards.
	Logger *slog.Logger
	// Progress, when set, is called after every chunk of tables.
	Progress func(Progress)
	// Wait makes a sync that finds another one running wait for it instead
	// of failing with ErrSyncInProgress.
	Wait bool
	// AutoMigrate applies pending catalog migrations instead of failing
	// with ErrNotMigrated.
	AutoMigrate bool
	// Force rebuilds every table even when its fingerprint is unchanged
	// (cached LLM descriptions are still reused).
	Force bool
	// SampleRows is how many rows are read per relation (default 100).
	SampleRows int
	// SampleColumns is how many columns are read per relation (default 100).
	SampleColumns int
	// SampleTimeout bounds each read of a relation (default 5s).
	SampleTimeout time.Duration
	// ChunkSize is how many relations are introspected and written per
	// round trip (default 250).
	ChunkSize int
	// JoinThreshold is the minimum score of an inferred join edge
	// (default 0.5).
	JoinThreshold float64
}

// Progress is a snapshot of a running sync.
type Progress struct {
	Phase   string // "tables", "joins" or "re-embed"
	Done    int
	Total   int
	Elapsed time.Duration
	Rate    float64       // items per second so far
	ETA     time.Duration // estimated time left; 0 when unknown
}

// SyncStats says what a sync did.
type SyncStats struct {
	Tables         int // relations selected
	Rebuilt        int // rows rewritten (new or changed fingerprint)
	Unchanged      int
	Skipped        int // recorded with skipped_reason
	Removed        int // relations that no longer exist
	Reembedded     int // re-embedded after an embedder change
	Described      int // LLM descriptions generated
	GlossaryAdded  int // unreviewed glossary entries proposed and stored
	DescribeFailed int
	SampleFailed   int
	SchemasJoined  int // schemas whose join edges were recomputed
	ForeignKeys    int // declared edges written
	Inferred       int // inferred edges written
	Version        int64
	Duration       time.Duration
}

func (o *SyncOptions) defaults() {
	if o.Embedder == nil {
		o.Embedder = NewBuiltinEmbedder(0)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.LLMConcurrency <= 0 {
		o.LLMConcurrency = 4
		if c, ok := o.LLM.(interface{ Concurrency() int }); ok && c.Concurrency() > 0 {
			o.LLMConcurrency = c.Concurrency()
		}
	}
	if o.LLMTimeout <= 0 {
		o.LLMTimeout = 60 * time.Second
	}
	if o.SampleRows <= 0 {
		o.SampleRows = 100
	}
	if o.SampleColumns <= 0 {
		o.SampleColumns = 100
	}
	if o.SampleTimeout <= 0 {
		o.SampleTimeout = 5 * time.Second
	}
	if o.ChunkSize <= 0 {
		o.ChunkSize = 250
	}
	if o.JoinThreshold <= 0 {
		o.JoinThreshold = 0.5
	}
}

// storedTable is what the catalog already holds about a relation.
type storedTable struct {
	id          int64
	fingerprint string
	llmFP       string
	needsEmbed  bool
	skipped     bool
}

type syncer struct {
	cat, src *pgxpool.Pool
	vecOID   uint32 // oid of pgvector's vector type in the catalog database
	vecArr   uint32 // oid of vector[]
	opts     SyncOptions
	log      *slog.Logger
	lim      sampleLimits
	salt     string
	stats    SyncStats
	start    time.Time
}

// Sync brings the catalog in the atrium schema of cat up to date with the
// relations of opts.Source (default: cat itself). It holds an advisory lock
// for its whole run, writes each table in its own transaction (bumping
// catalog_state.version in the same transaction) and rebuilds only tables
// whose fingerprint changed, so a sync that fails part way leaves a
// consistent catalog and the next one carries on where it stopped.
func Sync(ctx context.Context, cat *pgxpool.Pool, opts SyncOptions) (SyncStats, error) {
	opts.defaults()
	if opts.Source == nil {
		opts.Source = cat
	}
	filter, err := newSchemaFilter(opts.Schemas, opts.Exclude)
	if err != nil {
		return SyncStats{}, err
	}
	s := &syncer{cat: cat, src: opts.Source, opts: opts, log: opts.Logger, start: time.Now()}
	s.lim = sampleLimits{rows: opts.SampleRows, columns: opts.SampleColumns, valueLen: maxIndexedValueLen,
		timeoutMS: int(opts.SampleTimeout / time.Millisecond)}
	s.salt = docFormatVersion + "|" + strconv.Itoa(opts.SampleRows) + "|" + strconv.Itoa(opts.SampleColumns)

	unlock, err := lockCatalog(ctx, cat, opts.Wait, s.log)
	if err != nil {
		return SyncStats{}, err
	}
	defer unlock()

	if err := s.ensureSchema(ctx); err != nil {
		return SyncStats{}, err
	}
	if err := s.ensureEmbedder(ctx); err != nil {
		return SyncStats{}, err
	}
	if err := cat.QueryRow(ctx, "SELECT 'vector'::regtype::oid, '_vector'::regtype::oid").Scan(&s.vecOID, &s.vecArr); err != nil {
		return SyncStats{}, fmt.Errorf("catalog: look up the vector type: %w", err)
	}
	if _, err := cat.Exec(ctx, "UPDATE atrium.catalog_state SET last_sync_started = now()"); err != nil {
		return SyncStats{}, fmt.Errorf("catalog: record sync start: %w", err)
	}
	phase := time.Now()
	if err := s.syncTables(ctx, filter); err != nil {
		return s.stats, err
	}
	s.log.Debug("catalog sync: tables done", "duration", time.Since(phase))
	phase = time.Now()
	if err := s.syncJoins(ctx); err != nil {
		return s.stats, err
	}
	s.log.Debug("catalog sync: joins done", "duration", time.Since(phase))
	phase = time.Now()
	if err := s.reembed(ctx); err != nil {
		return s.stats, err
	}
	s.log.Debug("catalog sync: re-embed done", "duration", time.Since(phase))
	s.stats.Duration = time.Since(s.start)
	err = cat.QueryRow(ctx, `UPDATE atrium.catalog_state SET last_sync_finished = now(), last_sync_stats = $1
		RETURNING version`, s.statsJSON()).Scan(&s.stats.Version)
	if err != nil {
		return s.stats, fmt.Errorf("catalog: record sync end: %w", err)
	}
	s.log.Info("catalog sync done", "tables", s.stats.Tables, "rebuilt", s.stats.Rebuilt, "unchanged", s.stats.Unchanged,
		"skipped", s.stats.Skipped, "removed", s.stats.Removed, "foreign_keys", s.stats.ForeignKeys,
		"inferred", s.stats.Inferred, "version", s.stats.Version, "duration", s.stats.Duration.Round(time.Millisecond))
	return s.stats, nil
}

func (s *syncer) statsJSON() map[string]any {
	st := s.stats
	return map[string]any{
		"tables": st.Tables, "rebuilt": st.Rebuilt, "unchanged": st.Unchanged, "skipped": st.Skipped,
		"removed": st.Removed, "reembedded": st.Reembedded, "described": st.Described,
		"describe_failed": st.DescribeFailed, "sample_failed": st.SampleFailed, "glossary_added": st.GlossaryAdded,
		"schemas_joined": st.SchemasJoined, "foreign_keys": st.ForeignKeys, "inferred": st.Inferred,
		"embedder": s.opts.Embedder.Name(), "duration_ms": st.Duration.Milliseconds(),
	}
}

// lockCatalog takes the sync advisory lock on a dedicated connection and
// returns the function that releases it.
func lockCatalog(ctx context.Context, cat *pgxpool.Pool, wait bool, log *slog.Logger) (func(), error) {
	conn, err := cat.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("catalog: acquire lock connection: %w", err)
	}
	var got bool
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1, $2)", int32(migrations.LockClass), int32(syncLockKey)).Scan(&got); err != nil {
		conn.Release()
		return nil, fmt.Errorf("catalog: take sync lock: %w", err)
	}
	if !got {
		if !wait {
			conn.Release()
			return nil, ErrSyncInProgress
		}
		log.Info("another catalog sync is running; waiting for it")
		if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1, $2)", int32(migrations.LockClass), int32(syncLockKey)); err != nil {
			// A cancelled wait may leave the connection mid-query; drop it.
			conn.Conn().Close(context.WithoutCancel(ctx)) //nolint:errcheck
			conn.Release()
			return nil, fmt.Errorf("catalog: wait for sync lock: %w", err)
		}
	}
	return func() {
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if _, err := conn.Exec(uctx, "SELECT pg_advisory_unlock($1, $2)", int32(migrations.LockClass), int32(syncLockKey)); err != nil {
			// Closing the session releases its locks.
			conn.Conn().Close(uctx) //nolint:errcheck
		}
		conn.Release()
	}, nil
}

func (s *syncer) ensureSchema(ctx context.Context) error {
	cur, err := migrations.Current(ctx, s.cat)
	if err != nil {
		return err
	}
	if cur >= migrations.Latest() {
		return nil
	}
	if !s.opts.AutoMigrate {
		return fmt.Errorf("%w (catalog schema version %d, this binary needs %d)", ErrNotMigrated, cur, migrations.Latest())
	}
	res, err := migrations.Up(ctx, s.cat, migrations.Options{Logger: s.log})
	if err != nil {
		return err
	}
	s.log.Info("migrated the catalog schema", "version", res.Current)
	return nil
}

// ensureEmbedder types the embedding columns for the configured embedder.
// When the embedder or its dimension changed, every stored vector is
// cleared in the same transaction, and the re-embed phase fills them again.
func (s *syncer) ensureEmbedder(ctx context.Context) error {
	e := s.opts.Embedder
	var name string
	var dim int
	if err := s.cat.QueryRow(ctx, "SELECT embedder, dimension FROM atrium.catalog_state").Scan(&name, &dim); err != nil {
		return fmt.Errorf("catalog: read catalog state: %w", err)
	}
	if name == e.Name() && dim == e.Dimension() {
		// A bulk load that died before rebuilding the vector index leaves it
		// missing; put it back.
		return s.ensureVectorIndex(ctx)
	}
	if e.Dimension() <= 0 || e.Dimension() > 16000 {
		return fmt.Errorf("catalog: embedder %s has unusable dimension %d", e.Name(), e.Dimension())
	}
	s.log.Info("embedder changed; the catalog will be re-embedded", "from", name, "from_dimension", dim,
		"to", e.Name(), "to_dimension", e.Dimension())
	d := strconv.Itoa(e.Dimension())
	return pgx.BeginFunc(ctx, s.cat, func(tx pgx.Tx) error {
		for _, q := range []string{
			"DROP INDEX IF EXISTS atrium.tables_embedding_hnsw_idx",
			"UPDATE atrium.tables SET embedding = NULL WHERE embedding IS NOT NULL",
			"UPDATE atrium.columns SET embedding = NULL WHERE embedding IS NOT NULL",
			"ALTER TABLE atrium.tables ALTER COLUMN embedding TYPE vector(" + d + ")",
			"ALTER TABLE atrium.columns ALTER COLUMN embedding TYPE vector(" + d + ")",
			// HNSW is limited to 2,000 dimensions for vector; larger
			// embedders are searched exactly.
			func() string {
				if e.Dimension() > maxHNSWDimension {
					return "SELECT 1"
				}
				return createVectorIndexSQL
			}(),
		} {
			if _, err := tx.Exec(ctx, q); err != nil {
				return fmt.Errorf("catalog: switch embedder: %s: %w", q, err)
			}
		}
		_, err := tx.Exec(ctx, `UPDATE atrium.catalog_state SET embedder = $1, dimension = $2,
			version = version + 1, updated_at = now()`, e.Name(), e.Dimension())
		if err != nil {
			return fmt.Errorf("catalog: switch embedder: %w", err)
		}
		return nil
	})
}

const (
	// maxHNSWDimension is pgvector's limit for HNSW on vector; larger
	// embeddings are searched exactly.
	maxHNSWDimension     = 2000
	createVectorIndexSQL = "CREATE INDEX IF NOT EXISTS tables_embedding_hnsw_idx ON atrium.tables USING hnsw (embedding vector_cosine_ops)"
	// bulkLoadTables is how many new tables make a sync drop the vector
	// index and build it once at the end: an HNSW build is several times
	// cheaper than as many single inserts.
	bulkLoadTables = 1000
)

// acquire takes a catalog connection set up for bulk writes and returns
// the function that hands it back:
//   - pgvector's vector is encoded and decoded in binary (pgvector-go's
//     codec), several times cheaper than real[] for the thousands of
//     vectors a sync moves;
//   - JIT is off: generic plans of the per-table statements are estimated
//     far above jit_above_cost, and compiling them costs tens of
//     milliseconds per table for statements that run in one;
//   - synchronous_commit is off: the catalog can be rebuilt from the
//     source at any time, so losing the last commits in a crash costs
//     nothing, and waiting for each commit's WAL flush would dominate.
func (s *syncer) acquire(ctx context.Context) (*pgxpool.Conn, func(), error) {
	conn, err := s.cat.Acquire(ctx)
	if err != nil {
		return nil, nil, err
	}
	tm := conn.Conn().TypeMap()
	if _, ok := tm.TypeForOID(s.vecOID); !ok {
		t := &pgtype.Type{Name: "vector", OID: s.vecOID, Codec: &pgxvec.VectorCodec{}}
		tm.RegisterType(t)
		tm.RegisterType(&pgtype.Type{Name: "_vector", OID: s.vecArr, Codec: &pgtype.ArrayCodec{ElementType: t}})
	}
	if _, err := conn.Exec(ctx, "SET jit = off; SET synchronous_commit = off"); err != nil {
		conn.Release()
		return nil, nil, err
	}
	return conn, func() {
		// The settings must not outlive this use of a pooled connection.
		if _, err := conn.Exec(context.WithoutCancel(ctx), "RESET jit; RESET synchronous_commit"); err != nil {
			conn.Conn().Close(context.WithoutCancel(ctx)) //nolint:errcheck
		}
		conn.Release()
	}, nil
}

func (s *syncer) ensureVectorIndex(ctx context.Context) error {
	if s.opts.Embedder.Dimension() > maxHNSWDimension {
		return nil
	}
	var exists bool
	if err := s.cat.QueryRow(ctx, "SELECT to_regclass('atrium.tables_embedding_hnsw_idx') IS NOT NULL").Scan(&exists); err != nil {
		return fmt.Errorf("catalog: check vector index: %w", err)
	}
	if exists {
		return nil
	}
	t0 := time.Now()
	if _, err := s.cat.Exec(ctx, createVectorIndexSQL); err != nil {
		return fmt.Errorf("catalog: build vector index: %w", err)
	}
	s.log.Info("built the HNSW index on atrium.tables.embedding", "duration", time.Since(t0).Round(time.Millisecond))
	return nil
}

func (s *syncer) loadStored(ctx context.Context) (map[[2]string]storedTable, error) {
	rows, err := s.cat.Query(ctx, `SELECT id, schema_name, table_name, fingerprint, llm_fingerprint,
		embedding IS NULL AND skipped_reason IS NULL, skipped_reason IS NOT NULL FROM atrium.tables`)
	if err != nil {
		return nil, fmt.Errorf("catalog: read catalogued tables: %w", err)
	}
	defer rows.Close()
	out := map[[2]string]storedTable{}
	for rows.Next() {
		var st storedTable
		var sch, name string
		if err := rows.Scan(&st.id, &sch, &name, &st.fingerprint, &st.llmFP, &st.needsEmbed, &st.skipped); err != nil {
			return nil, fmt.Errorf("catalog: read catalogued tables: %w", err)
		}
		out[[2]string{sch, name}] = st
	}
	return out, rows.Err()
}

func (s *syncer) syncTables(ctx context.Context, filter schemaFilter) error {
	rels, err := listRelations(ctx, s.src, filter)
	if err != nil {
		return err
	}
	s.stats.Tables = len(rels)
	stored, err := s.loadStored(ctx)
	if err != nil {
		return err
	}
	// Relations that vanished, or fell outside the filter, leave the catalog.
	present := make(map[[2]string]bool, len(rels))
	for _, r := range rels {
		present[[2]string{r.Schema, r.Name}] = true
	}
	var gone []int64
	var goneSchemas []string
	for k, st := range stored {
		if !present[k] {
			gone = append(gone, st.id)
			goneSchemas = append(goneSchemas, k[0])
		}
	}
	if len(gone) > 0 {
		err := pgx.BeginFunc(ctx, s.cat, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, "DELETE FROM atrium.tables WHERE id = ANY($1)", gone); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO atrium.dirty_schemas (schema_name)
				SELECT DISTINCT unnest($1::text[]) ON CONFLICT DO NOTHING`, goneSchemas); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "UPDATE atrium.catalog_state SET version = version + 1, updated_at = now()")
			return err
		})
		if err != nil {
			return fmt.Errorf("catalog: remove dropped relations: %w", err)
		}
		s.stats.Removed = len(gone)
	}

	// Pipeline: while chunk n is being written, chunk n+1 is introspected
	// and sampled, so the two databases (or the one, from two connections)
	// and the embedder overlap.
	type prepared struct {
		docs []*tableDoc
		n    int
	}
	// Loading many new tables: drop the vector index now, build it once at
	// the end (also when the sync fails; the next sync's start repairs it if
	// even that fails). Queries meanwhile scan exactly, which is correct.
	newTables := 0
	for _, r := range rels {
		if _, ok := stored[[2]string{r.Schema, r.Name}]; !ok {
			newTables++
		}
	}
	if s.opts.Embedder.Dimension() <= maxHNSWDimension &&
		((newTables >= bulkLoadTables && 2*newTables >= len(rels)) || (s.opts.Force && len(rels) >= bulkLoadTables)) {
		if _, err := s.cat.Exec(ctx, "DROP INDEX IF EXISTS atrium.tables_embedding_hnsw_idx"); err != nil {
			return fmt.Errorf("catalog: drop vector index for bulk load: %w", err)
		}
		defer func() {
			if err := s.ensureVectorIndex(context.WithoutCancel(ctx)); err != nil {
				s.log.Error("could not rebuild the vector index; the next sync retries", "err", err)
			}
		}()
	}

	// A chunk prepared before a failure (say, the embedder going down at
	// chunk n+1) is still written: the writer uses ctx, not the producer's
	// context, and drains the channel.
	ch := make(chan prepared, 1)
	pctx, cancelProducer := context.WithCancel(ctx)
	defer cancelProducer()
	var prodErr error
	go func() {
		defer close(ch)
		for start := 0; start < len(rels); start += s.opts.ChunkSize {
			chunk := rels[start:min(start+s.opts.ChunkSize, len(rels))]
			docs, err := s.prepareChunk(pctx, chunk, stored)
			if err != nil {
				prodErr = err
				return
			}
			select {
			case ch <- prepared{docs: docs, n: len(chunk)}:
			case <-pctx.Done():
				prodErr = pctx.Err()
				return
			}
		}
	}()
	var writeErr error
	done := 0
	for p := range ch {
		if writeErr != nil {
			continue
		}
		if len(p.docs) > 0 {
			t0 := time.Now()
			err := s.writeDocs(ctx, p.docs)
			s.log.Debug("catalog sync: wrote chunk", "relations", len(p.docs), "duration", time.Since(t0))
			if err == nil {
				err = s.writeGlossary(ctx, p.docs)
			}
			if err != nil {
				writeErr = err
				cancelProducer()
				continue
			}
		}
		for _, d := range p.docs {
			d.rel.Columns, d.rel.FKs, d.rel.constraints = nil, nil, nil
		}
		done += p.n
		s.progress("tables", done, len(rels))
	}
	if writeErr != nil {
		return writeErr
	}
	return prodErr
}

func (s *syncer) progress(phase string, done, total int) {
	if s.opts.Progress == nil {
		return
	}
	el := time.Since(s.start)
	p := Progress{Phase: phase, Done: done, Total: total, Elapsed: el}
	if el > 0 {
		p.Rate = float64(done) / el.Seconds()
	}
	if p.Rate > 0 && total > done {
		p.ETA = time.Duration(float64(total-done) / p.Rate * float64(time.Second))
	}
	s.opts.Progress(p)
}

// prepareChunk introspects a chunk, decides which relations changed and
// builds their documents, descriptions and embeddings.
func (s *syncer) prepareChunk(ctx context.Context, chunk []*relation, stored map[[2]string]storedTable) ([]*tableDoc, error) {
	t0 := time.Now()
	if err := loadDetails(ctx, s.src, chunk); err != nil {
		return nil, err
	}
	s.log.Debug("catalog sync: introspected chunk", "relations", len(chunk), "duration", time.Since(t0))
	var changed []*relation
	var fps []string
	for _, r := range chunk {
		fp := r.fingerprint(s.salt)
		st, ok := stored[[2]string{r.Schema, r.Name}]
		rebuild := !ok || st.fingerprint != fp || s.opts.Force ||
			(s.opts.LLM != nil && r.CanSelect && !st.skipped && st.llmFP != fp)
		if !rebuild {
			s.stats.Unchanged++
			r.Columns, r.FKs, r.constraints = nil, nil, nil
			continue
		}
		changed = append(changed, r)
		fps = append(fps, fp)
	}
	if len(changed) == 0 {
		return nil, nil
	}
	t0 = time.Now()
	samples, err := sampleAll(ctx, s.src, changed, s.lim)
	if err != nil {
		return nil, err
	}
	s.log.Debug("catalog sync: sampled chunk", "relations", len(changed), "duration", time.Since(t0))
	docs := make([]*tableDoc, len(changed))
	for i, r := range changed {
		if samples[i].err != nil {
			s.stats.SampleFailed++
			s.log.Warn("could not sample relation; cataloguing it without values", "relation", r.qualified(), "err", samples[i].err)
		}
		docs[i] = buildDoc(r, samples[i], fps[i])
	}
	if s.opts.LLM != nil {
		if err := s.describe(ctx, docs, stored); err != nil {
			return nil, err
		}
	}
	t0 = time.Now()
	if err := s.embedDocs(ctx, docs); err != nil {
		return nil, err
	}
	s.log.Debug("catalog sync: embedded chunk", "relations", len(docs), "duration", time.Since(t0))
	return docs, nil
}

// describe fills purposes and descriptions: from the catalog's cache when
// the fingerprint they were made for still holds, else from the LLM with
// bounded concurrency and a per-call timeout. Failures are logged and leave
// the table undescribed (llm_fingerprint empty) for the next sync to retry.
func (s *syncer) describe(ctx context.Context, docs []*tableDoc, stored map[[2]string]storedTable) error {
	var cachedIDs []int64
	cachedDoc := map[int64]*tableDoc{}
	var todo []int
	for i, d := range docs {
		if d.skipped != "" {
			continue
		}
		st, ok := stored[[2]string{d.rel.Schema, d.rel.Name}]
		if ok && st.llmFP == d.fingerprint {
			cachedIDs = append(cachedIDs, st.id)
			cachedDoc[st.id] = d
			continue
		}
		todo = append(todo, i)
	}
	if len(cachedIDs) > 0 {
		if err := s.loadCachedDescriptions(ctx, cachedIDs, cachedDoc); err != nil {
			return err
		}
	}
	var mu sync.Mutex
	sem := make(chan struct{}, s.opts.LLMConcurrency)
	var wg sync.WaitGroup
	for _, i := range todo {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return ctx.Err()
		}
		wg.Add(1)
		go func(d *tableDoc) {
			defer wg.Done()
			defer func() { <-sem }()
			req := d.describeRequest()
			cctx, cancel := context.WithTimeout(ctx, s.opts.LLMTimeout)
			defer cancel()
			desc, err := s.opts.LLM.Describe(cctx, req)
			if err != nil {
				mu.Lock()
				defer mu.Unlock()
				s.stats.DescribeFailed++
				s.log.Warn("LLM description failed; the table is catalogued without it and retried next sync",
					"relation", d.rel.qualified(), "err", err)
				return
			}
			// Proposed only with a description that is kept, so each
			// version of a table is asked once (a failed description is
			// retried, and the proposal with it).
			props := s.proposeGlossary(ctx, d, req)
			mu.Lock()
			defer mu.Unlock()
			s.stats.Described++
			d.applyDescription(desc)
			d.glossary = props
		}(docs[i])
	}
	wg.Wait()
	return ctx.Err()
}

func (d *tableDoc) applyDescription(desc Description) {
	if desc.Purpose != "" {
		p := truncateRunes(desc.Purpose, 2000)
		d.purpose = &p
	}
	d.descriptions = map[string]string{}
	for k, v := range desc.Columns {
		d.descriptions[k] = truncateRunes(v, 500)
	}
	d.llmFP = d.fingerprint
	d.render()
}

func (s *syncer) loadCachedDescriptions(ctx context.Context, ids []int64, docs map[int64]*tableDoc) error {
	rows, err := s.cat.Query(ctx, `SELECT t.id, t.purpose, c.column_name, c.description
		FROM atrium.tables t LEFT JOIN atrium.columns c ON c.table_id = t.id AND c.description IS NOT NULL
		WHERE t.id = ANY($1)`, ids)
	if err != nil {
		return fmt.Errorf("catalog: read cached descriptions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var purpose, col, desc *string
		if err := rows.Scan(&id, &purpose, &col, &desc); err != nil {
			return fmt.Errorf("catalog: read cached descriptions: %w", err)
		}
		d := docs[id]
		d.purpose = purpose
		d.llmFP = d.fingerprint
		if d.descriptions == nil {
			d.descriptions = map[string]string{}
		}
		if col != nil && desc != nil {
			d.descriptions[*col] = *desc
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("catalog: read cached descriptions: %w", err)
	}
	for _, d := range docs {
		d.render()
	}
	return nil
}

// embedDocs embeds every document and column text of a chunk in one call.
func (s *syncer) embedDocs(ctx context.Context, docs []*tableDoc) error {
	var texts []string
	for _, d := range docs {
		if d.skipped != "" {
			continue
		}
		texts = append(texts, d.document)
		texts = append(texts, d.colTexts...)
	}
	if len(texts) == 0 {
		return nil
	}
	vecs, err := s.opts.Embedder.Embed(ctx, texts)
	if err != nil {
		return fmt.Errorf("catalog: embed with %s: %w", s.opts.Embedder.Name(), err)
	}
	if len(vecs) != len(texts) {
		return fmt.Errorf("catalog: embedder %s returned %d vectors for %d texts", s.opts.Embedder.Name(), len(vecs), len(texts))
	}
	k := 0
	dim := s.opts.Embedder.Dimension()
	for _, d := range docs {
		if d.skipped != "" {
			continue
		}
		d.embedding = vecs[k]
		d.colEmb = vecs[k+1 : k+1+len(d.colTexts)]
		k += 1 + len(d.colTexts)
		if len(d.embedding) != dim {
			return fmt.Errorf("catalog: embedder %s returned a vector of dimension %d, want %d", s.opts.Embedder.Name(), len(d.embedding), dim)
		}
	}
	return nil
}
