package billing

import (
	"context"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"broll/internal/apperr"
	"broll/internal/redisx"
	"broll/tenancy"
)

// DownloadLimiterOptions are the fetches per minute a download link may take: per
// purchase (one link shared far and wide) and per client address (one
// client fetching everything it can). Both are generous for people and
// players (a player resuming with ranges makes a few requests a file).
type DownloadLimiterOptions struct {
	PerPurchase int
	PerAddress  int
}

// DownloadLimiter counts fetches in Redis (GCRA, shared by all nodes).
type DownloadLimiter struct {
	limiter *redis_rate.Limiter
	limits  DownloadLimiterOptions
}

// NewDownloadLimiter returns a limiter over rdb with the service's key prefix.
func NewDownloadLimiter(rdb *redis.Client, prefix string, limits DownloadLimiterOptions) *DownloadLimiter {
	return &DownloadLimiter{limiter: redisx.Limiter(rdb, prefix), limits: limits}
}

// Allow counts one fetch of purchase from clientAddr, or says when to retry
// (rate_limited with retry_after_seconds). The address is checked first, so
// that one client's flood does not spend a purchase's allowance. Without
// Redis the fetch is allowed: the link's signature is still the proof, and
// a download is no reason to fail while Redis restarts.
func (l *DownloadLimiter) Allow(ctx context.Context, purchase uuid.UUID, clientAddr string) error {
	if err := l.allow(ctx, "address:"+tenancy.AddressBucket(clientAddr), l.limits.PerAddress, "from this address"); err != nil {
		return err
	}
	return l.allow(ctx, "purchase:"+purchase.String(), l.limits.PerPurchase, "of this purchase")
}

func (l *DownloadLimiter) allow(ctx context.Context, what string, perMinute int, who string) error {
	res, err := l.limiter.Allow(ctx, "download:"+what, redis_rate.PerMinute(perMinute))
	if err != nil || res.Allowed > 0 {
		return nil
	}
	retry := max(int((res.RetryAfter+time.Second-1)/time.Second), 1)
	return apperr.New(apperr.RateLimited, "too many downloads %s (limit %d a minute); retry in %d s", who, perMinute, retry).
		With("retry_after_seconds", retry).With("limit", perMinute)
}
