package license

import (
	"context"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"broll/internal/apperr"
	"broll/internal/redisx"
	"broll/tenancy"
)

// LookupLimiter bounds the public verify page per client address (GCRA in
// Redis, shared by all nodes), so that nobody walks the id space from one
// address; the ids' 128 random bits are what makes walking it hopeless.
type LookupLimiter struct {
	limiter   *redis_rate.Limiter
	perMinute int
}

// LookupLimiterOptions tune a LookupLimiter.
type LookupLimiterOptions struct {
	// PerMinute is the lookups an address may make a minute
	// (BROLL_LICENSE_LOOKUPS_PER_ADDRESS_PER_MINUTE).
	PerMinute int
}

// NewLookupLimiter returns a limiter over rdb with the service's key prefix.
func NewLookupLimiter(rdb *redis.Client, prefix string, o LookupLimiterOptions) *LookupLimiter {
	return &LookupLimiter{limiter: redisx.Limiter(rdb, prefix), perMinute: o.PerMinute}
}

// Allow counts one lookup from clientAddr, or says when to retry. Without
// Redis the lookup is allowed: the page shows nothing private, and a
// licence is no reason to fail while Redis restarts.
func (l *LookupLimiter) Allow(ctx context.Context, clientAddr string) error {
	res, err := l.limiter.Allow(ctx, "license:address:"+tenancy.AddressBucket(clientAddr), redis_rate.PerMinute(l.perMinute))
	if err != nil || res.Allowed > 0 {
		return nil
	}
	retry := max(int((res.RetryAfter+time.Second-1)/time.Second), 1)
	return apperr.New(apperr.RateLimited, "too many licence lookups from this address (limit %d a minute); retry in %d s", l.perMinute, retry).
		With("retry_after_seconds", retry).With("limit", l.perMinute)
}
