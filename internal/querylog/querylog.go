// Package querylog records every natural-language question and RETRIEVE in
// atrium.query_log (migrations/0010_query_log.sql), where DBAs read it with
// plain SQL.
//
// Logging must never slow a query: Log only puts the entry on a bounded
// queue and returns. One goroutine drains the queue and writes batches with
// COPY. When the catalog database is slow or down the queue fills and new
// entries are dropped and counted (atrium_query_log_dropped_total) instead
// of blocking the session that asked. A second goroutine deletes rows older
// than the retention period.
package querylog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/atriumdb/atrium/internal/telemetry"
)

// Kinds of entries, the values of the kind column.
const (
	KindNL       = "nl"       // a question answered with rows
	KindNLSQL    = "nl_sql"   // a question answered with its SQL only
	KindRetrieve = "retrieve" // RETRIEVE: tables only
)

// Statuses of entries, the values of the status column.
const (
	StatusOK        = "ok"
	StatusError     = "error"
	StatusCancelled = "cancelled"
)

// Entry is one question's record. Fields map to atrium.query_log's columns;
// empty strings and nil pointers are stored as NULL where the column
// allows it.
type Entry struct {
	// Time is when the question arrived (zero: when Log was called).
	Time        time.Time
	RequestID   string
	Database    string
	Role        string
	Application string
	Kind        string // KindNL, KindNLSQL or KindRetrieve
	Question    string
	// Tables are the chosen tables, schema-qualified, in rank order.
	Tables []string
	// Threshold is the ATR threshold score; nil when retrieval did not run.
	Threshold      *float64
	CatalogVersion *int64
	SQL            string
	Status         string // StatusOK, StatusError or StatusCancelled
	SQLState       string
	Error          string
	Rows           int64
	Truncated      bool
	CacheHit       bool
	CacheTier      string // "", telemetry.TierResult or telemetry.TierSQL
	Model          string
	// PromptTokens and CompletionTokens sum every LLM call of the question.
	PromptTokens     int
	CompletionTokens int
	RepairRounds     int
	Total            time.Duration
	// Stages holds each stage's duration by stage name ("retrieve",
	// "llm", "validate", "execute"... as the pipeline reports them).
	Stages map[string]time.Duration
	// ExampleID is the atrium.examples row whose SQL answered without an
	// LLM call; 0 (NULL) otherwise.
	ExampleID int64
	// FollowUpOf is the request id of the session's previous question
	// when this one was answered as its follow-up; "" (NULL) otherwise.
	FollowUpOf string
}

// DB is what the writer needs of the catalog database; *pgxpool.Pool
// satisfies it.
type DB interface {
	CopyFrom(ctx context.Context, tableName pgx.Identifier, columnNames []string, rowSrc pgx.CopyFromSource) (int64, error)
	Exec(ctx context.Context, sql string, arguments ...any) (pgconn.CommandTag, error)
}

// Config tunes the writer. Zero fields take the defaults shown.
type Config struct {
	// QueueSize bounds the entries waiting to be written (default 10000);
	// beyond it entries are dropped.
	QueueSize int
	// BatchSize is the most entries written by one COPY (default 500).
	BatchSize int
	// FlushInterval is the longest an entry waits for a batch to fill
	// (default 1s).
	FlushInterval time.Duration
	// WriteTimeout bounds one batch write (default 10s).
	WriteTimeout time.Duration
	// Retention deletes rows older than this; 0 keeps them forever.
	// SetRetention changes it later.
	Retention time.Duration
	// PurgeInterval is how often retention runs (default 1h; the first run
	// is one minute after start).
	PurgeInterval time.Duration
	// Instance names this Atrium instance in every row (host or pod name).
	Instance string
}

func (c *Config) defaults() {
	if c.QueueSize <= 0 {
		c.QueueSize = 10000
	}
	if c.BatchSize <= 0 {
		c.BatchSize = 500
	}
	if c.FlushInterval <= 0 {
		c.FlushInterval = time.Second
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = 10 * time.Second
	}
	if c.PurgeInterval <= 0 {
		c.PurgeInterval = time.Hour
	}
}

// Options are the writer's dependencies; nil fields take safe defaults.
type Options struct {
	Logger  *slog.Logger               // nil: discard
	Metrics *telemetry.QueryLogMetrics // nil: private, unexported metrics
	Now     func() time.Time           // nil: time.Now
	// firstPurge overrides the delay before the first purge (tests).
	firstPurge time.Duration
}

// Writer writes entries asynchronously. Log is safe for concurrent use and
// never blocks; Close must be called once to flush and stop.
type Writer struct {
	db   DB
	cfg  Config
	log  *slog.Logger
	m    *telemetry.QueryLogMetrics
	now  func() time.Time
	opts Options

	queue chan Entry
	stop  chan struct{}
	wg    sync.WaitGroup
	// writeCtx governs batch writes; Close cancels it when its own
	// context ends before the queue is drained.
	writeCtx    context.Context
	cancelWrite context.CancelFunc
	// stopCtx ends when Close begins; it stops a running purge.
	stopCtx    context.Context
	cancelStop context.CancelFunc
	retention  atomic.Int64 // time.Duration

	mu struct {
		sync.RWMutex
		closed bool
	}
	lastErrLog time.Time // owned by the writing goroutine
}

// New starts a writer on db. Callers must call Close.
func New(db DB, cfg Config, opts Options) *Writer {
	cfg.defaults()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Metrics == nil {
		opts.Metrics = telemetry.NewQueryLogMetrics(nil)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.firstPurge <= 0 {
		opts.firstPurge = time.Minute
	}
	w := &Writer{
		db:    db,
		cfg:   cfg,
		log:   opts.Logger,
		m:     opts.Metrics,
		now:   opts.Now,
		opts:  opts,
		queue: make(chan Entry, cfg.QueueSize),
		stop:  make(chan struct{}),
	}
	w.writeCtx, w.cancelWrite = context.WithCancel(context.Background())
	w.stopCtx, w.cancelStop = context.WithCancel(context.Background())
	w.retention.Store(int64(cfg.Retention))
	w.wg.Add(2)
	go w.run()
	go w.purgeLoop()
	return w
}

// Log queues e and returns at once: true when queued, false when dropped
// (queue full, writer closed, or an entry the table would reject).
func (w *Writer) Log(e Entry) bool {
	switch e.Kind {
	case KindNL, KindNLSQL, KindRetrieve:
	default:
		w.m.Dropped.WithLabelValues(telemetry.DropInvalid).Inc()
		return false
	}
	switch e.Status {
	case StatusOK, StatusError, StatusCancelled:
	default:
		e.Status = StatusError
	}
	if e.Time.IsZero() {
		e.Time = w.now()
	}
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.mu.closed {
		w.m.Dropped.WithLabelValues(telemetry.DropClosed).Inc()
		return false
	}
	select {
	case w.queue <- e:
		w.m.QueueLength.Inc()
		return true
	default:
		w.m.Dropped.WithLabelValues(telemetry.DropQueueFull).Inc()
		return false
	}
}

// Close stops accepting entries, writes the queued ones and stops the
// goroutines. If ctx ends first, the write in progress is cancelled and
// what is left is counted as dropped. Close is idempotent.
func (w *Writer) Close(ctx context.Context) error {
	w.mu.Lock()
	already := w.mu.closed
	w.mu.closed = true
	w.mu.Unlock()
	if !already {
		close(w.stop)
		w.cancelStop()
	}
	finished := make(chan struct{})
	go func() { w.wg.Wait(); close(finished) }()
	select {
	case <-finished:
		w.cancelWrite()
		return nil
	case <-ctx.Done():
		w.cancelWrite()
		<-finished
		return fmt.Errorf("query log: close: %w", ctx.Err())
	}
}

func (w *Writer) run() {
	defer w.wg.Done()
	ticker := time.NewTicker(w.cfg.FlushInterval)
	defer ticker.Stop()
	batch := make([]Entry, 0, w.cfg.BatchSize)
	flush := func() {
		if len(batch) > 0 {
			w.write(batch)
			batch = batch[:0]
		}
	}
	for {
		select {
		case e := <-w.queue:
			w.m.QueueLength.Dec()
			batch = append(batch, e)
			if len(batch) >= w.cfg.BatchSize {
				flush()
			}
		case <-ticker.C:
			flush()
		case <-w.stop:
			// Log no longer adds to the queue (closed is set under the
			// lock before stop closes), so draining it terminates.
			for {
				select {
				case e := <-w.queue:
					w.m.QueueLength.Dec()
					batch = append(batch, e)
					if len(batch) >= w.cfg.BatchSize {
						flush()
					}
				default:
					flush()
					return
				}
			}
		}
	}
}

// columns are atrium.query_log's columns in the order row writes them.
var columns = []string{
	"logged_at", "request_id", "instance", "database_name", "role_name", "application_name",
	"kind", "question", "chosen_tables", "threshold", "catalog_version", "generated_sql",
	"status", "sqlstate", "error_message", "row_count", "rows_truncated", "cache_hit",
	"cache_tier", "model", "prompt_tokens", "completion_tokens", "repair_rounds",
	"total_ms", "stage_ms", "example_id", "follow_up_of",
}

var tableName = pgx.Identifier{"atrium", "query_log"}

// write stores one batch with COPY; a failure drops the batch (counted)
// rather than retrying, so a broken catalog database costs bounded memory.
func (w *Writer) write(batch []Entry) {
	if w.writeCtx.Err() != nil {
		w.m.Dropped.WithLabelValues(telemetry.DropClosed).Add(float64(len(batch)))
		return
	}
	rows := make([][]any, len(batch))
	for i := range batch {
		rows[i] = w.row(&batch[i])
	}
	ctx, cancel := context.WithTimeout(w.writeCtx, w.cfg.WriteTimeout)
	defer cancel()
	start := time.Now()
	n, err := w.db.CopyFrom(ctx, tableName, columns, pgx.CopyFromRows(rows))
	w.m.FlushSeconds.Observe(time.Since(start).Seconds())
	if err != nil {
		reason := telemetry.DropWriteError
		if errors.Is(err, context.Canceled) && w.writeCtx.Err() != nil {
			reason = telemetry.DropClosed
		}
		w.m.Dropped.WithLabelValues(reason).Add(float64(len(batch)))
		// A broken catalog database fails every flush; say so at most
		// once a minute.
		if now := time.Now(); now.Sub(w.lastErrLog) >= time.Minute {
			w.lastErrLog = now
			w.log.Warn("query log: batch dropped", "entries", len(batch), "err", err)
		}
		return
	}
	w.m.Written.Add(float64(n))
}

func (w *Writer) row(e *Entry) []any {
	stages := make(map[string]float64, len(e.Stages))
	for k, d := range e.Stages {
		stages[k] = ms(d)
	}
	stageJSON, _ := json.Marshal(stages) // a map of float64 always marshals
	tables := e.Tables
	if tables == nil {
		tables = []string{}
	}
	return []any{
		e.Time, e.RequestID, w.cfg.Instance, e.Database, e.Role, e.Application,
		e.Kind, e.Question, tables, e.Threshold, e.CatalogVersion, nullable(e.SQL),
		e.Status, nullable(e.SQLState), nullable(e.Error), e.Rows, e.Truncated, e.CacheHit,
		nullable(e.CacheTier), nullable(e.Model), e.PromptTokens, e.CompletionTokens, e.RepairRounds,
		ms(e.Total), stageJSON, nullableID(e.ExampleID), nullable(e.FollowUpOf),
	}
}

func nullableID(id int64) *int64 {
	if id == 0 {
		return nil
	}
	return &id
}

// ms is d in milliseconds with microsecond resolution.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// purgeBatch bounds one DELETE so retention never holds many row locks or
// writes a huge WAL burst at once.
const purgeBatch = 10000

// SetRetention changes the retention period from the next purge on (0:
// keep rows forever). Serve calls it when SIGHUP reloads
// --query-log-retention.
func (w *Writer) SetRetention(d time.Duration) { w.retention.Store(int64(d)) }

// Purge deletes rows older than the retention period, in batches, and
// returns how many it deleted. It does nothing when retention is 0.
func (w *Writer) Purge(ctx context.Context) (int64, error) {
	retention := time.Duration(w.retention.Load())
	if retention <= 0 {
		return 0, nil
	}
	cutoff := w.now().Add(-retention)
	var total int64
	for {
		tag, err := w.db.Exec(ctx, `DELETE FROM atrium.query_log WHERE id IN (
			SELECT id FROM atrium.query_log WHERE logged_at < $1 LIMIT $2)`, cutoff, purgeBatch)
		if err != nil {
			return total, fmt.Errorf("query log: purge rows before %s: %w", cutoff.Format(time.RFC3339), err)
		}
		total += tag.RowsAffected()
		w.m.Purged.Add(float64(tag.RowsAffected()))
		if tag.RowsAffected() < purgeBatch {
			return total, nil
		}
	}
}

func (w *Writer) purgeLoop() {
	defer w.wg.Done()
	timer := time.NewTimer(w.opts.firstPurge)
	defer timer.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-timer.C:
		}
		ctx, cancel := context.WithTimeout(w.stopCtx, 10*time.Minute)
		n, err := w.Purge(ctx)
		cancel()
		switch {
		case err != nil && ctx.Err() == nil:
			w.log.Warn("query log: retention purge failed", "err", err)
		case n > 0:
			w.log.Info("query log: retention purge", "deleted", n, "retention", time.Duration(w.retention.Load()))
		}
		timer.Reset(w.cfg.PurgeInterval)
	}
}
