package resultcache

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/test/testdb"
)

func sampleResult() *Result {
	return &Result{
		SQL:       "SELECT id, name FROM shop.customers ORDER BY id",
		Tables:    []string{"shop.customers"},
		Relations: []string{`"shop"."customers"`},
		Fields: []pgproto3.FieldDescription{
			{Name: []byte("id"), TableOID: 16384, TableAttributeNumber: 1, DataTypeOID: 20, DataTypeSize: 8, TypeModifier: -1},
			{Name: []byte("name"), TableOID: 16384, TableAttributeNumber: 2, DataTypeOID: 25, DataTypeSize: -1, TypeModifier: -1},
		},
		Rows:       [][][]byte{{[]byte("1"), []byte("Ann")}, {[]byte("2"), nil}, {[]byte("3"), []byte("")}},
		Truncated:  true,
		CommandTag: "SELECT 3",
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	r := sampleResult()
	got, err := decodeResult(encodeResult(r))
	require.NoError(t, err)
	require.Equal(t, r.SQL, got.SQL)
	require.Equal(t, r.Tables, got.Tables)
	require.Equal(t, r.Relations, got.Relations)
	require.Equal(t, r.Fields, got.Fields)
	require.Equal(t, r.Truncated, got.Truncated)
	require.Equal(t, r.CommandTag, got.CommandTag)
	require.Len(t, got.Rows, 3)
	require.Nil(t, got.Rows[1][1], "NULL must stay NULL")
	require.NotNil(t, got.Rows[2][1], "empty string must not become NULL")
	require.Equal(t, []byte("Ann"), got.Rows[0][1])

	e := &SQLEntry{SQL: "SELECT 1", Tables: []string{"a.b"}, Relations: []string{`"a"."b"`}}
	ge, err := decodeSQL(encodeSQL(e))
	require.NoError(t, err)
	require.Equal(t, e, ge)

	_, err = decodeResult(encodeSQL(e))
	require.ErrorIs(t, err, errCorrupt)
	enc := encodeResult(r)
	_, err = decodeResult(enc[:len(enc)-3])
	require.ErrorIs(t, err, errCorrupt)
}

func FuzzDecode(f *testing.F) {
	f.Add(encodeResult(sampleResult()))
	f.Add(encodeSQL(&SQLEntry{SQL: "SELECT 1"}))
	f.Add([]byte{1, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		if r, err := decodeResult(b); err == nil {
			// What decodes re-encodes to the same bytes.
			if !bytes.Equal(encodeResult(r), b) {
				t.Fatalf("re-encoding differs")
			}
		}
		_, _ = decodeSQL(b)
	})
}

func TestLRU(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	l := NewLRU(100, clock)
	require.NoError(t, l.Set(ctx, "a", make([]byte, 40), time.Minute))
	require.NoError(t, l.Set(ctx, "b", make([]byte, 40), time.Minute))
	_, err := l.Get(ctx, "a") // a becomes most recently used
	require.NoError(t, err)
	require.NoError(t, l.Set(ctx, "c", make([]byte, 40), time.Minute))
	_, err = l.Get(ctx, "b")
	require.ErrorIs(t, err, ErrMiss, "b was least recently used and must be evicted")
	_, err = l.Get(ctx, "a")
	require.NoError(t, err)

	require.NoError(t, l.Set(ctx, "huge", make([]byte, 200), time.Minute))
	_, err = l.Get(ctx, "huge")
	require.ErrorIs(t, err, ErrMiss)

	now = now.Add(2 * time.Minute)
	_, err = l.Get(ctx, "a")
	require.ErrorIs(t, err, ErrMiss, "expired")

	require.NoError(t, l.Set(ctx, "p:1", []byte("x"), time.Minute))
	require.NoError(t, l.Set(ctx, "q:1", []byte("x"), time.Minute))
	n, err := l.Flush(ctx, "p:")
	require.NoError(t, err)
	require.Equal(t, 1, n)
	_, err = l.Get(ctx, "q:1")
	require.NoError(t, err)
}

func TestCacheTiersAndCap(t *testing.T) {
	ctx := context.Background()
	c := New(Config{MaxEntryBytes: 300}, NewLRU(1<<20, nil), Options{})
	_, ok := c.GetResult(ctx, "k")
	require.False(t, ok)
	c.PutResult(ctx, "k", sampleResult())
	got, ok := c.GetResult(ctx, "k")
	require.True(t, ok)
	require.Equal(t, "SELECT 3", got.CommandTag)

	big := sampleResult()
	big.Rows = append(big.Rows, [][]byte{[]byte("4"), make([]byte, 400)})
	c.PutResult(ctx, "big", big)
	_, ok = c.GetResult(ctx, "big")
	require.False(t, ok, "an entry over the cap is not stored")

	c.PutSQL(ctx, "k", &SQLEntry{SQL: "SELECT 1"})
	e, ok := c.GetSQL(ctx, "k")
	require.True(t, ok)
	require.Equal(t, "SELECT 1", e.SQL)
}

func uniqueKey(t *testing.T) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return t.Name() + ":" + hex.EncodeToString(b[:])
}

func TestRedisStore(t *testing.T) {
	ctx := context.Background()
	client, err := OpenRedis(testdb.RedisURL())
	require.NoError(t, err)
	if err := client.Ping(ctx).Err(); err != nil {
		t.Fatalf("redis at %s: %v (is Redis running? `make test` starts it)", testdb.RedisURL(), err)
	}
	c := New(Config{TTL: time.Second}, NewRedis(client), Options{})
	defer c.Close()
	key := uniqueKey(t)
	_, ok := c.GetResult(ctx, key)
	require.False(t, ok)
	c.PutResult(ctx, key, sampleResult())
	got, ok := c.GetResult(ctx, key)
	require.True(t, ok)
	require.Equal(t, sampleResult().Rows[0], got.Rows[0])
	ttl, err := client.PTTL(ctx, resultPrefix+key).Result()
	require.NoError(t, err)
	require.Greater(t, ttl, time.Duration(0))
	require.LessOrEqual(t, ttl, time.Second)
	client.Del(ctx, resultPrefix+key)
}

func TestOpenRedisURLs(t *testing.T) {
	for _, u := range []string{
		"redis://127.0.0.1:6379/0",
		"rediss://user:pw@example.com:6380/2",
		"redis+cluster://127.0.0.1:7000?addr=127.0.0.1:7001&addr=127.0.0.1:7002",
		"redis+sentinel://127.0.0.1:26379/1?master_name=mymaster&addr=127.0.0.1:26380",
	} {
		c, err := OpenRedis(u)
		require.NoError(t, err, u)
		require.NoError(t, c.Close())
	}
	for _, u := range []string{"127.0.0.1:6379", "memcached://x", "redis+sentinel://127.0.0.1:26379", "redis+cluster://:pw@[::1"} {
		_, err := OpenRedis(u)
		require.Error(t, err, u)
	}
	_, err := OpenRedis("redis+bogus://user:secret@host")
	require.Error(t, err)
	require.NotContains(t, err.Error(), "secret")
}

func TestRedisDownServesUncached(t *testing.T) {
	ctx := context.Background()
	addr, stop := testdb.StartRedis(t)
	client, err := OpenRedis("redis://" + addr + "/0?dial_timeout=200ms&max_retries=0")
	require.NoError(t, err)
	reg := prometheus.NewRegistry()
	now := time.Unix(0, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	c := New(Config{Backoff: time.Second}, NewRedis(client), Options{Registerer: reg, Now: clock})
	defer c.Close()

	c.PutResult(ctx, "k", sampleResult())
	_, ok := c.GetResult(ctx, "k")
	require.True(t, ok)

	// Flush sees exactly our keys.
	c.PutSQL(ctx, "k", &SQLEntry{SQL: "SELECT 1"})
	require.NoError(t, client.Set(ctx, "other:app:key", "v", 0).Err())
	n, err := c.Flush(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.Equal(t, "v", client.Get(ctx, "other:app:key").Val())
	c.PutResult(ctx, "k", sampleResult())

	stop()
	_, ok = c.GetResult(ctx, "k")
	require.False(t, ok, "a dead store is a miss, not an error")
	require.Equal(t, 1.0, testutil.ToFloat64(c.m.errors))
	// Within the back-off the store is not even tried.
	c.PutResult(ctx, "k", sampleResult())
	_, ok = c.GetSQL(ctx, "k")
	require.False(t, ok)
	require.Equal(t, 1.0, testutil.ToFloat64(c.m.errors))
	require.Equal(t, 1.0, testutil.ToFloat64(c.m.requests.WithLabelValues("sql", "bypass")))
	mu.Lock()
	now = now.Add(2 * time.Second)
	mu.Unlock()
	_, ok = c.GetResult(ctx, "k")
	require.False(t, ok)
	require.Equal(t, 2.0, testutil.ToFloat64(c.m.errors))
}

// TestDeleteBothTiers: Delete removes a key's rows and SQL in the
// in-process store and in Redis, says how many entries it removed, and
// leaves other keys alone.
func TestDeleteBothTiers(t *testing.T) {
	ctx := context.Background()
	client, err := OpenRedis(testdb.RedisURL())
	require.NoError(t, err)
	if err := client.Ping(ctx).Err(); err != nil {
		t.Fatalf("redis at %s: %v (is Redis running? `make test` starts it)", testdb.RedisURL(), err)
	}
	for name, store := range map[string]Store{"memory": NewLRU(1<<20, nil), "redis": NewRedis(client)} {
		t.Run(name, func(t *testing.T) {
			c := New(Config{}, store, Options{})
			key, other := uniqueKey(t), uniqueKey(t)
			t.Cleanup(func() { _, _ = c.Delete(ctx, other) })
			for _, k := range []string{key, other} {
				c.PutResult(ctx, k, sampleResult())
				c.PutSQL(ctx, k, &SQLEntry{SQL: "SELECT 1"})
			}
			n, err := c.Delete(ctx, key)
			require.NoError(t, err)
			require.Equal(t, 2, n)
			_, ok := c.GetResult(ctx, key)
			require.False(t, ok)
			_, ok = c.GetSQL(ctx, key)
			require.False(t, ok)
			_, ok = c.GetResult(ctx, other)
			require.True(t, ok, "another key's rows stay")
			n, err = c.Delete(ctx, key)
			require.NoError(t, err)
			require.Zero(t, n, "nothing left to delete")
		})
	}
	_ = client.Close()
}
