package metrics_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"broll/internal/metrics"
	"broll/internal/testkit"
)

// TestRedisPool: the Redis client's pool is exported as broll_redis_pool_*,
// its size, its connections in use and idle, and its waits: a pool of two
// held by two blocked commands makes a third wait past its timeout.
func TestRedisPool(t *testing.T) {
	t.Parallel()
	ks := testkit.Redis(t)
	opts, err := redis.ParseURL(ks.URL)
	if err != nil {
		t.Fatal(err)
	}
	opts.PoolSize, opts.PoolTimeout, opts.MaxRetries = 2, 100*time.Millisecond, -1 // one timeout per command
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { _ = rdb.Close() })
	reg := metrics.NewRegistry()
	metrics.RegisterRedisPool(reg, rdb)
	scrape := func() testkit.Metrics {
		rec := httptest.NewRecorder()
		metrics.Handler(reg).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		return testkit.ParseMetrics(t, rec.Body.Bytes())
	}
	want := func(m testkit.Metrics, family string, labels map[string]string, v float64) {
		t.Helper()
		if got, ok := m.Value(family, labels); !ok || got != v {
			t.Errorf("%s%v = %v (present %v), want %v", family, labels, got, ok, v)
		}
	}

	ctx := context.Background()
	// Two connections held by blocking pops, the third command times out.
	held := make(chan error, 2)
	for i := range 2 {
		go func() { held <- rdb.BLPop(ctx, time.Second, ks.Prefix+"empty"+string(rune('a'+i))).Err() }()
	}
	time.Sleep(200 * time.Millisecond)
	m := scrape()
	want(m, "broll_redis_pool_max_conns", nil, 2)
	want(m, "broll_redis_pool_conns", map[string]string{"state": "in_use"}, 2)
	want(m, "broll_redis_pool_conns", map[string]string{"state": "idle"}, 0)
	if err := rdb.Ping(ctx).Err(); err == nil {
		t.Fatal("a third command on a pool of two held ones did not time out")
	}
	for range 2 {
		<-held
	}
	m = scrape()
	want(m, "broll_redis_pool_conns", map[string]string{"state": "in_use"}, 0)
	want(m, "broll_redis_pool_conns", map[string]string{"state": "idle"}, 2)
	want(m, "broll_redis_pool_timeouts_total", nil, 1)
}
