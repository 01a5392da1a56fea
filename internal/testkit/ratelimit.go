package testkit

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// AdmittedAtMost is how many requests a per-minute limit whose burst is the
// limit (GCRA in Redis, or the token bucket a node falls back to) can admit in
// a run that lasted elapsed on the limiter's clock: the full burst, and one
// more for every emission interval (a minute / limit) that passed. With
// the first `limit` requests of a fresh key, which are always admitted, it
// bounds a count that is true however long the requests take; an exact
// count holds only while they all finish within one emission interval.
func AdmittedAtMost(limit int, elapsed time.Duration) int {
	return limit + int(elapsed/(time.Minute/time.Duration(limit)))
}

// RedisNow is the Redis server's clock, the one redis_rate's limiter
// script reads: a run timed with it is timed on the limiter's clock.
func RedisNow(t testing.TB, rdb redis.Cmdable) time.Time {
	t.Helper()
	now, err := rdb.Time(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return now
}
