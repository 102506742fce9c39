// Package resultcache keeps answers to natural-language questions: the rows
// (short-lived, --cache-ttl) and, in a second tier, only the validated SQL
// (longer-lived, --sql-cache-ttl), in Redis or an in-process LRU.
//
// The cache never fails a query: a store that errors or is slow is logged and
// counted, its operation treated as a miss (or a skipped write), and after a
// failure the store is left alone for a short back-off so a dead Redis does
// not add a timeout to every question. Keys are built by the caller from
// everything that decides the answer (question, catalog version, database,
// role, search_path, model); this package adds its own prefix.
package resultcache

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// KeyPrefix starts every key this package writes; `atrium cache flush`
// deletes exactly the keys under it.
const KeyPrefix = "atrium:nl:v1:"

const (
	resultPrefix = KeyPrefix + "r:"
	sqlPrefix    = KeyPrefix + "s:"
)

// Config holds the cache's settings.
type Config struct {
	// TTL is how long rows are kept. Default 5m; negative disables the
	// tier.
	TTL time.Duration
	// SQLTTL is how long the SQL of a question is kept. Default 24h;
	// negative disables the tier.
	SQLTTL time.Duration
	// MaxEntryBytes caps one encoded result; bigger results keep only their
	// SQL. Default 1 MiB.
	MaxEntryBytes int
	// OpTimeout bounds one store operation. Default 250ms.
	OpTimeout time.Duration
	// Backoff is how long the store is bypassed after it failed. Default 1s.
	Backoff time.Duration
}

func (c Config) withDefaults() Config {
	if c.TTL == 0 {
		c.TTL = 5 * time.Minute
	}
	if c.SQLTTL == 0 {
		c.SQLTTL = 24 * time.Hour
	}
	if c.MaxEntryBytes == 0 {
		c.MaxEntryBytes = 1 << 20
	}
	if c.OpTimeout == 0 {
		c.OpTimeout = 250 * time.Millisecond
	}
	if c.Backoff == 0 {
		c.Backoff = time.Second
	}
	return c
}

// Options are the cache's injected dependencies; nil fields get defaults.
type Options struct {
	Logger *slog.Logger
	// Registerer receives the cache's metrics; nil registers nothing.
	Registerer prometheus.Registerer
	// Now is the clock for the back-off. Default time.Now.
	Now func() time.Time
}

// Cache is the two-tier question cache over a Store. Safe for concurrent use.
type Cache struct {
	cfg    Config
	store  Store
	log    *slog.Logger
	now    func() time.Time
	m      *metrics
	downAt atomic.Int64 // unix nanos until which the store is bypassed
}

type metrics struct {
	requests *prometheus.CounterVec // tier, result (hit, miss, error, bypass)
	writes   *prometheus.CounterVec // tier, result (ok, error, too_large, bypass)
	errors   prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "atrium_cache_requests_total",
			Help: "Question cache look-ups by tier (result, sql) and result (hit, miss, error, bypass).",
		}, []string{"tier", "result"}),
		writes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "atrium_cache_writes_total",
			Help: "Question cache writes by tier and result (ok, error, too_large, bypass).",
		}, []string{"tier", "result"}),
		errors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "atrium_cache_errors_total",
			Help: "Cache store operations that failed; the query was served uncached.",
		}),
	}
	if reg != nil {
		reg.MustRegister(m.requests, m.writes, m.errors)
	}
	return m
}

// New returns a Cache over store. The Cache owns the store: Close closes it.
func New(cfg Config, store Store, opts Options) *Cache {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Cache{cfg: cfg.withDefaults(), store: store, log: opts.Logger, now: opts.Now, m: newMetrics(opts.Registerer)}
}

// Config returns the effective configuration (defaults applied).
func (c *Cache) Config() Config { return c.cfg }

// Close closes the store.
func (c *Cache) Close() error { return c.store.Close() }

func (c *Cache) bypassed() bool { return c.now().UnixNano() < c.downAt.Load() }

func (c *Cache) failed(op string, err error) {
	c.m.errors.Inc()
	// Log once per back-off window, not once per query.
	until := c.now().Add(c.cfg.Backoff).UnixNano()
	if old := c.downAt.Load(); c.now().UnixNano() >= old && c.downAt.CompareAndSwap(old, until) {
		c.log.Warn("result cache unavailable; serving uncached", "op", op, "err", err, "backoff", c.cfg.Backoff)
	}
}

func (c *Cache) get(ctx context.Context, tier, key string) ([]byte, bool) {
	if c.bypassed() {
		c.m.requests.WithLabelValues(tier, "bypass").Inc()
		return nil, false
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.OpTimeout)
	defer cancel()
	b, err := c.store.Get(ctx, key)
	switch {
	case err == nil:
		c.m.requests.WithLabelValues(tier, "hit").Inc()
		return b, true
	case errors.Is(err, ErrMiss):
		c.m.requests.WithLabelValues(tier, "miss").Inc()
	default:
		c.m.requests.WithLabelValues(tier, "error").Inc()
		c.failed("get", err)
	}
	return nil, false
}

func (c *Cache) set(ctx context.Context, tier, key string, value []byte, ttl time.Duration) {
	if c.bypassed() {
		c.m.writes.WithLabelValues(tier, "bypass").Inc()
		return
	}
	// A write happens after the client's rows were produced; it must not
	// be cut short because the query's own context ends right after.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.cfg.OpTimeout)
	defer cancel()
	if err := c.store.Set(ctx, key, value, ttl); err != nil {
		c.m.writes.WithLabelValues(tier, "error").Inc()
		c.failed("set", err)
		return
	}
	c.m.writes.WithLabelValues(tier, "ok").Inc()
}

// GetResult returns the cached rows for key. Any store failure is a miss.
func (c *Cache) GetResult(ctx context.Context, key string) (*Result, bool) {
	if c.cfg.TTL < 0 {
		return nil, false
	}
	b, ok := c.get(ctx, "result", resultPrefix+key)
	if !ok {
		return nil, false
	}
	r, err := decodeResult(b)
	if err != nil {
		c.log.Warn("result cache: undecodable entry ignored", "err", err)
		return nil, false
	}
	return r, true
}

// PutResult caches r under key for the configured TTL, unless it is bigger
// than MaxEntryBytes (the SQL tier still serves the question then).
func (c *Cache) PutResult(ctx context.Context, key string, r *Result) {
	if c.cfg.TTL < 0 {
		return
	}
	b := encodeResult(r)
	if len(b) > c.cfg.MaxEntryBytes {
		c.m.writes.WithLabelValues("result", "too_large").Inc()
		return
	}
	c.set(ctx, "result", resultPrefix+key, b, c.cfg.TTL)
}

// GetSQL returns the cached SQL for key. Any store failure is a miss.
func (c *Cache) GetSQL(ctx context.Context, key string) (*SQLEntry, bool) {
	if c.cfg.SQLTTL < 0 {
		return nil, false
	}
	b, ok := c.get(ctx, "sql", sqlPrefix+key)
	if !ok {
		return nil, false
	}
	e, err := decodeSQL(b)
	if err != nil {
		c.log.Warn("result cache: undecodable SQL entry ignored", "err", err)
		return nil, false
	}
	return e, true
}

// PutSQL caches e under key for the SQL TTL.
func (c *Cache) PutSQL(ctx context.Context, key string, e *SQLEntry) {
	if c.cfg.SQLTTL < 0 {
		return
	}
	c.set(ctx, "sql", sqlPrefix+key, encodeSQL(e), c.cfg.SQLTTL)
}

// Delete removes the entries of key from both tiers (rows and SQL), so the
// next identical question is generated again: what feedback does to an
// answer marked wrong. It says how many entries were there. Unlike reads
// and writes it reports a store failure, and it is not skipped during the
// back-off: the caller tells the user whether the answer was evicted.
func (c *Cache) Delete(ctx context.Context, key string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.OpTimeout)
	defer cancel()
	n := 0
	for _, k := range []string{resultPrefix + key, sqlPrefix + key} {
		ok, err := c.store.Delete(ctx, k)
		if err != nil {
			c.failed("delete", err)
			return n, err
		}
		if ok {
			n++
		}
	}
	return n, nil
}

// Flush deletes every entry this package wrote to the store.
func (c *Cache) Flush(ctx context.Context) (int, error) {
	return c.store.Flush(ctx, KeyPrefix)
}
