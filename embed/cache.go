package embed

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

const (
	// DefaultQueryCacheTTL keeps a query's vector for a day: popular queries
	// repeat within hours, and a vector never goes stale for the same model.
	DefaultQueryCacheTTL = 24 * time.Hour
	// cacheOpTimeout keeps a slow Redis from slowing searches: past it the
	// cache is skipped and the model asked.
	cacheOpTimeout = 250 * time.Millisecond
)

// QueryCache embeds search queries through an Embedder, keeping the vectors
// in Redis so that a repeated query never reaches the model. The key holds
// the model name, so a model change never serves another model's vector.
// Redis trouble is not a search failure: the cache is bypassed.
type QueryCache struct {
	embedder Embedder
	rdb      *redis.Client
	prefix   string
	ttl      time.Duration
}

// QueryCacheOptions tune a QueryCache.
type QueryCacheOptions struct {
	// TTL is how long a query's vector is kept; <= 0 means
	// DefaultQueryCacheTTL.
	TTL time.Duration
}

// NewCachedQueryEmbedder returns a cache over e in rdb under keys starting
// with prefix. rdb may be nil (no caching).
func NewCachedQueryEmbedder(e Embedder, rdb *redis.Client, prefix string, o QueryCacheOptions) *QueryCache {
	ttl := o.TTL
	if ttl <= 0 {
		ttl = DefaultQueryCacheTTL
	}
	return &QueryCache{embedder: e, rdb: rdb, prefix: prefix, ttl: ttl}
}

// Model names the vectors EmbedQuery returns.
func (c *QueryCache) Model() string { return c.embedder.Model() }

// EmbedQuery returns the query vector of text, from the cache when it can.
func (c *QueryCache) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	norm := NormalizeQuery(text)
	if norm == "" {
		return nil, errors.New("embed query: empty query")
	}
	key := c.Key(norm)
	if v, ok := c.get(ctx, key); ok {
		return v, nil
	}
	vs, err := c.embedder.Embed(ctx, Query, []string{norm})
	if err != nil {
		return nil, fmt.Errorf("embed query: %w", err)
	}
	if len(vs) != 1 {
		return nil, fmt.Errorf("embed query: %d vectors for one query", len(vs))
	}
	c.set(ctx, key, vs[0])
	return vs[0], nil
}

// Key is the cache key of an already normalised query.
func (c *QueryCache) Key(normalized string) string {
	sum := sha256.Sum256([]byte(normalized))
	return c.prefix + c.embedder.Model() + ":" + hex.EncodeToString(sum[:])
}

// NormalizeQuery lowercases text and collapses runs of white space, so that
// queries differing only in case or spacing share a cache entry (and the
// model sees the same text for them).
func NormalizeQuery(text string) string {
	return strings.Join(strings.Fields(strings.ToLower(text)), " ")
}

func (c *QueryCache) get(ctx context.Context, key string) ([]float32, bool) {
	if c.rdb == nil {
		return nil, false
	}
	ctx, cancel := context.WithTimeout(ctx, cacheOpTimeout)
	defer cancel()
	b, err := c.rdb.Get(ctx, key).Bytes()
	if err != nil {
		// A miss (redis.Nil) and an unreachable Redis both mean: ask the model.
		return nil, false
	}
	return decodeVector(b)
}

func (c *QueryCache) set(ctx context.Context, key string, v []float32) {
	if c.rdb == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, cacheOpTimeout)
	defer cancel()
	// Best effort: a failed write only costs a model call next time.
	_ = c.rdb.Set(ctx, key, encodeVector(v), c.ttl).Err()
}

// encodeVector packs v as little-endian float32s: 3 KiB for 768 dims, a
// quarter of its JSON.
func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// decodeVector refuses anything but a whole vector, so a truncated or
// foreign value is a miss rather than a wrong answer.
func decodeVector(b []byte) ([]float32, bool) {
	if len(b) != 4*Dimensions {
		return nil, false
	}
	v := make([]float32, Dimensions)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, true
}

// Recent returns up to n query vectors of the cache's model, the queries
// customers asked within the TTL, in no particular order (Redis's SCAN
// order), for measuring what searches get on real queries (semantic
// search's calibration). No Redis, or an error, returns what was read.
func (c *QueryCache) Recent(ctx context.Context, n int) ([][]float32, error) {
	if c.rdb == nil || n <= 0 {
		return nil, nil
	}
	match := escapeGlob(c.prefix+c.embedder.Model()+":") + "*"
	var keys []string
	iter := c.rdb.Scan(ctx, 0, match, 1000).Iterator()
	for len(keys) < n && iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		return nil, fmt.Errorf("embed: recent queries: %w", err)
	}
	var out [][]float32
	for start := 0; start < len(keys); start += 100 {
		vals, err := c.rdb.MGet(ctx, keys[start:min(start+100, len(keys))]...).Result()
		if err != nil {
			return out, fmt.Errorf("embed: recent queries: %w", err)
		}
		for _, v := range vals {
			if s, ok := v.(string); ok {
				if vec, ok := decodeVector([]byte(s)); ok {
					out = append(out, vec)
				}
			}
		}
	}
	return out, nil
}

// escapeGlob quotes the characters a Redis MATCH pattern reads as a glob.
func escapeGlob(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
