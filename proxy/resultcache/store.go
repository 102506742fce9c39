package resultcache

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrMiss is what a Store returns for a key it does not hold.
var ErrMiss = errors.New("resultcache: miss")

// Store is where encoded entries live. Implementations are safe for
// concurrent use.
type Store interface {
	// Get returns the value under key, or ErrMiss.
	Get(ctx context.Context, key string) ([]byte, error)
	// Set stores value under key for ttl.
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
	// Delete removes key and reports whether it was there.
	Delete(ctx context.Context, key string) (bool, error)
	// Flush deletes every key starting with prefix and says how many.
	Flush(ctx context.Context, prefix string) (int, error)
	// Close releases the store's connections.
	Close() error
}

// LRU is an in-process Store bounded by the total size of its values and
// keys; the least recently used entries go first, and expired entries are
// dropped when met. It is the default when no Redis is configured; entries
// are private to the process.
type LRU struct {
	maxBytes int64
	now      func() time.Time

	mu struct {
		sync.Mutex
		bytes int64
		ll    *list.List // front: most recently used
		items map[string]*list.Element
	}
}

type lruItem struct {
	key     string
	value   []byte
	expires time.Time
}

// NewLRU returns an LRU holding at most maxBytes of keys and values. now may
// be nil (time.Now); tests pass a fake clock to expire entries.
func NewLRU(maxBytes int64, now func() time.Time) *LRU {
	if now == nil {
		now = time.Now
	}
	c := &LRU{maxBytes: maxBytes, now: now}
	c.mu.ll = list.New()
	c.mu.items = make(map[string]*list.Element)
	return c
}

// Get implements Store.
func (c *LRU) Get(_ context.Context, key string) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.mu.items[key]
	if !ok {
		return nil, ErrMiss
	}
	it := el.Value.(*lruItem)
	if !c.now().Before(it.expires) {
		c.removeLocked(el)
		return nil, ErrMiss
	}
	c.mu.ll.MoveToFront(el)
	return it.value, nil
}

// Set implements Store. A value larger than the whole budget is not stored.
func (c *LRU) Set(_ context.Context, key string, value []byte, ttl time.Duration) error {
	size := int64(len(key) + len(value))
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.mu.items[key]; ok {
		c.removeLocked(el)
	}
	if size > c.maxBytes || ttl <= 0 {
		return nil
	}
	// The caller may reuse its buffer; the cache keeps its own copy.
	v := append([]byte(nil), value...)
	c.mu.items[key] = c.mu.ll.PushFront(&lruItem{key: key, value: v, expires: c.now().Add(ttl)})
	c.mu.bytes += size
	for c.mu.bytes > c.maxBytes {
		c.removeLocked(c.mu.ll.Back())
	}
	return nil
}

func (c *LRU) removeLocked(el *list.Element) {
	it := c.mu.ll.Remove(el).(*lruItem)
	delete(c.mu.items, it.key)
	c.mu.bytes -= int64(len(it.key) + len(it.value))
}

// Delete implements Store. An expired entry counts as absent.
func (c *LRU) Delete(_ context.Context, key string) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.mu.items[key]
	if !ok {
		return false, nil
	}
	live := c.now().Before(el.Value.(*lruItem).expires)
	c.removeLocked(el)
	return live, nil
}

// Flush implements Store.
func (c *LRU) Flush(_ context.Context, prefix string) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for k, el := range c.mu.items {
		if strings.HasPrefix(k, prefix) {
			c.removeLocked(el)
			n++
		}
	}
	return n, nil
}

// Close implements Store.
func (c *LRU) Close() error { return nil }

// Redis is a Store on a Redis server, Redis Cluster or Sentinel-managed
// master, through go-redis's UniversalClient.
type Redis struct {
	client redis.UniversalClient
}

// NewRedis returns a Store using client; Close closes the client.
func NewRedis(client redis.UniversalClient) *Redis { return &Redis{client: client} }

// OpenRedis connects to the Redis named by rawURL:
//
//	redis://[user:password@]host:port[/db]        a single server (rediss:// for TLS, unix:// for a socket)
//	redis+cluster://host:port?addr=host2:port2    Redis Cluster seed nodes
//	redis+sentinel://host:26379?master_name=mymaster&addr=host2:26379[/db]
//	                                              Sentinel nodes and the master's name
//
// The URL's query parameters are go-redis's options (dial_timeout,
// read_timeout, pool_size, ...). Nothing is dialled until first use.
func OpenRedis(rawURL string) (redis.UniversalClient, error) {
	scheme, rest, ok := strings.Cut(rawURL, "://")
	if !ok {
		return nil, fmt.Errorf("redis URL %q: missing scheme (redis://, rediss://, redis+cluster://, redis+sentinel://)", redactURL(rawURL))
	}
	base, mode, _ := strings.Cut(scheme, "+")
	plain := base + "://" + rest
	switch mode {
	case "":
		o, err := redis.ParseURL(rawURL)
		if err != nil {
			return nil, fmt.Errorf("redis URL %q: %w", redactURL(rawURL), err)
		}
		return redis.NewClient(o), nil
	case "cluster":
		o, err := redis.ParseClusterURL(plain)
		if err != nil {
			return nil, fmt.Errorf("redis cluster URL %q: %w", redactURL(rawURL), err)
		}
		return redis.NewClusterClient(o), nil
	case "sentinel":
		o, err := redis.ParseFailoverURL(plain)
		if err != nil {
			return nil, fmt.Errorf("redis sentinel URL %q: %w", redactURL(rawURL), err)
		}
		if o.MasterName == "" {
			return nil, fmt.Errorf("redis sentinel URL %q: master_name parameter is required", redactURL(rawURL))
		}
		return redis.NewFailoverClient(o), nil
	default:
		return nil, fmt.Errorf("redis URL %q: unknown scheme %q", redactURL(rawURL), scheme)
	}
}

// redactURL hides a password in a URL for messages.
func redactURL(s string) string {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return s
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return s
	}
	userinfo := rest[:at]
	if user, _, hasPw := strings.Cut(userinfo, ":"); hasPw {
		return scheme + "://" + user + ":xxxxx@" + rest[at+1:]
	}
	return s
}

// Get implements Store.
func (r *Redis) Get(ctx context.Context, key string) ([]byte, error) {
	b, err := r.client.Get(ctx, key).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, ErrMiss
	}
	if err != nil {
		return nil, fmt.Errorf("redis GET: %w", err)
	}
	return b, nil
}

// Set implements Store.
func (r *Redis) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if err := r.client.Set(ctx, key, value, ttl).Err(); err != nil {
		return fmt.Errorf("redis SET: %w", err)
	}
	return nil
}

// Delete implements Store with UNLINK (one key, so one cluster slot).
func (r *Redis) Delete(ctx context.Context, key string) (bool, error) {
	n, err := r.client.Unlink(ctx, key).Result()
	if err != nil {
		return false, fmt.Errorf("redis UNLINK: %w", err)
	}
	return n > 0, nil
}

// Flush implements Store: SCAN for the prefix and UNLINK what it finds, on
// every master of a cluster. It never uses FLUSHDB: the database may be
// shared with other applications.
func (r *Redis) Flush(ctx context.Context, prefix string) (int, error) {
	pattern := escapeGlob(prefix) + "*"
	var (
		mu    sync.Mutex
		total int
	)
	flushOne := func(ctx context.Context, c *redis.Client) error {
		var cursor uint64
		for {
			keys, next, err := c.Scan(ctx, cursor, pattern, 1000).Result()
			if err != nil {
				return fmt.Errorf("redis SCAN: %w", err)
			}
			if len(keys) > 0 {
				// One key per UNLINK keeps cluster slots apart; on a single
				// server a pipeline makes it one round trip.
				pipe := c.Pipeline()
				for _, k := range keys {
					pipe.Unlink(ctx, k)
				}
				if _, err := pipe.Exec(ctx); err != nil {
					return fmt.Errorf("redis UNLINK: %w", err)
				}
				mu.Lock()
				total += len(keys)
				mu.Unlock()
			}
			if next == 0 {
				return nil
			}
			cursor = next
		}
	}
	var err error
	switch c := r.client.(type) {
	case *redis.ClusterClient:
		err = c.ForEachMaster(ctx, flushOne)
	case *redis.Client:
		err = flushOne(ctx, c)
	default:
		err = fmt.Errorf("redis flush: unsupported client type %T", r.client)
	}
	return total, err
}

// escapeGlob quotes the characters SCAN MATCH treats specially.
func escapeGlob(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '*', '?', '[', ']', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Close implements Store.
func (r *Redis) Close() error { return r.client.Close() }
