package embed_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"broll/embed"
	"broll/internal/testkit"
)

// countingEmbedder records every text that reached the model.
type countingEmbedder struct {
	embed.Embedder
	model string

	mu    sync.Mutex
	texts []string
	err   error
}

func (c *countingEmbedder) Model() string { return c.model }

func (c *countingEmbedder) Embed(ctx context.Context, kind embed.Kind, texts []string) ([][]float32, error) {
	c.mu.Lock()
	c.texts = append(c.texts, texts...)
	err := c.err
	c.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return c.Embedder.Embed(ctx, kind, texts)
}

func (c *countingEmbedder) calls() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.texts)
}

func newCounting(model string) *countingEmbedder {
	return &countingEmbedder{Embedder: embed.NewBuiltin(), model: model}
}

func TestQueryCacheRepeatedQueryNeverReachesModel(t *testing.T) {
	t.Parallel()
	rds := testkit.Redis(t)
	rdb := rds.Client
	ctx := context.Background()
	model := newCounting("m1")
	c := embed.NewCachedQueryEmbedder(model, rdb, rds.Prefix+"qcache:", embed.QueryCacheOptions{TTL: time.Hour})

	first, err := c.EmbedQuery(ctx, "Lady  cracking up on the SOFA")
	if err != nil {
		t.Fatal(err)
	}
	// Same query in another case and spacing: served from Redis.
	second, err := c.EmbedQuery(ctx, "  lady cracking up\ton the sofa ")
	if err != nil {
		t.Fatal(err)
	}
	if got := model.calls(); !slices.Equal(got, []string{"lady cracking up on the sofa"}) {
		t.Fatalf("model saw %q, want one normalised call", got)
	}
	if !slices.Equal(first, second) {
		t.Fatal("cached vector differs from the computed one")
	}
	if len(second) != embed.Dimensions {
		t.Fatalf("%d dims", len(second))
	}

	key := c.Key(embed.NormalizeQuery("Lady cracking up on the sofa"))
	if !strings.HasPrefix(key, rds.Prefix+"qcache:m1:") {
		t.Errorf("key %q does not carry prefix and model", key)
	}
	ttl, err := rdb.TTL(ctx, key).Result()
	if err != nil || ttl <= 0 || ttl > time.Hour {
		t.Errorf("ttl = %s, %v; want at most an hour", ttl, err)
	}
	raw, err := rdb.Get(ctx, key).Bytes()
	if err != nil || len(raw) != 4*embed.Dimensions {
		t.Errorf("stored value is %d bytes (%v), want %d", len(raw), err, 4*embed.Dimensions)
	}
}

func TestQueryCacheKeyedByModel(t *testing.T) {
	t.Parallel()
	rds := testkit.Redis(t)
	rdb := rds.Client
	ctx := context.Background()
	m1, m2 := newCounting("m1"), newCounting("m2")
	c1 := embed.NewCachedQueryEmbedder(m1, rdb, rds.Prefix, embed.QueryCacheOptions{})
	c2 := embed.NewCachedQueryEmbedder(m2, rdb, rds.Prefix, embed.QueryCacheOptions{})
	if c1.Key("x") == c2.Key("x") {
		t.Fatal("two models share a cache key")
	}
	for _, c := range []*embed.QueryCache{c1, c2} {
		if _, err := c.EmbedQuery(ctx, "man driving"); err != nil {
			t.Fatal(err)
		}
	}
	if len(m1.calls()) != 1 || len(m2.calls()) != 1 {
		t.Fatalf("m1 saw %q, m2 saw %q: each model must compute its own vector", m1.calls(), m2.calls())
	}
	if ttl := rdb.TTL(ctx, c1.Key("man driving")).Val(); ttl < 23*time.Hour {
		t.Errorf("default ttl = %s, want a day", ttl)
	}
}

func TestQueryCacheRedisDownFallsBackToModel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{
		Addr: strings.TrimPrefix(closedURL(t), "http://"), MaxRetries: -1, DialTimeout: 100 * time.Millisecond,
	})
	t.Cleanup(func() { _ = rdb.Close() })
	model := newCounting("m1")
	c := embed.NewCachedQueryEmbedder(model, rdb, "q:", embed.QueryCacheOptions{TTL: time.Hour})
	for range 2 {
		v, err := c.EmbedQuery(ctx, "woman at the gym")
		if err != nil {
			t.Fatalf("redis down made the query fail: %v", err)
		}
		if len(v) != embed.Dimensions {
			t.Fatalf("%d dims", len(v))
		}
	}
	if n := len(model.calls()); n != 2 {
		t.Fatalf("model called %d times, want 2 (no cache)", n)
	}
}

func TestQueryCacheErrors(t *testing.T) {
	t.Parallel()
	rds := testkit.Redis(t)
	rdb := rds.Client
	ctx := context.Background()
	model := newCounting("m1")
	model.err = errors.New("model down")
	c := embed.NewCachedQueryEmbedder(model, rdb, rds.Prefix, embed.QueryCacheOptions{TTL: time.Hour})
	if _, err := c.EmbedQuery(ctx, "anything"); err == nil || !strings.Contains(err.Error(), "model down") {
		t.Fatalf("err = %v, want the model's error", err)
	}
	if keys, err := rds.Keys(ctx); err != nil || len(keys) != 0 {
		t.Errorf("a failure was cached: keys %q (%v)", keys, err)
	}
	if _, err := c.EmbedQuery(ctx, "   "); err == nil {
		t.Error("empty query accepted")
	}
	// A value that is not a whole vector is a miss, not an answer.
	model.err = nil
	if err := rdb.Set(ctx, c.Key("truncated"), []byte{1, 2, 3}, time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	v, err := c.EmbedQuery(ctx, "truncated")
	if err != nil || len(v) != embed.Dimensions {
		t.Fatalf("truncated entry: %d dims, %v", len(v), err)
	}
}

func TestQueryCacheWithoutRedis(t *testing.T) {
	t.Parallel()
	model := newCounting("m1")
	c := embed.NewCachedQueryEmbedder(model, nil, "q:", embed.QueryCacheOptions{})
	if _, err := c.EmbedQuery(context.Background(), "coffee"); err != nil {
		t.Fatal(err)
	}
	if c.Model() != "m1" {
		t.Errorf("model = %q", c.Model())
	}
}

// Recent hands back the cached query vectors of the cache's own model,
// never another model's (a model name with glob characters included), and
// at most as many as asked.
func TestQueryCacheRecentQueries(t *testing.T) {
	t.Parallel()
	rds := testkit.Redis(t)
	ctx := context.Background()
	mine := embed.NewCachedQueryEmbedder(newCounting("m[1]*"), rds.Client, rds.Prefix, embed.QueryCacheOptions{})
	other := embed.NewCachedQueryEmbedder(newCounting("m11"), rds.Client, rds.Prefix, embed.QueryCacheOptions{})
	want := map[string][]float32{}
	for _, q := range []string{"man driving", "woman laughing", "dog in a park"} {
		v, err := mine.EmbedQuery(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		want[q] = v
	}
	if _, err := other.EmbedQuery(ctx, "a crowd cheering"); err != nil {
		t.Fatal(err)
	}
	got, err := mine.Recent(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d recent vectors, want the model's 3", len(got))
	}
	for _, v := range got {
		found := false
		for _, w := range want {
			found = found || slices.Equal(v, w)
		}
		if !found {
			t.Fatal("a recent vector is none of the model's queries")
		}
	}
	if two, err := mine.Recent(ctx, 2); err != nil || len(two) != 2 {
		t.Fatalf("Recent(2): %d vectors, %v", len(two), err)
	}
}
