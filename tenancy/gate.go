package tenancy

import (
	"cmp"
	"context"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"golang.org/x/time/rate"

	"broll/internal/marks"
)

// Decision is the outcome of admitting one request.
type Decision struct {
	Revoked    bool
	Allowed    bool
	Limit      int
	Remaining  int
	RetryAfter time.Duration // until the next request is allowed; 0 when allowed
	ResetAfter time.Duration // until the allowance is full again
	// Fallback is true when Redis could not be reached and the decision was
	// made by the in-process limiter of this node.
	Fallback bool
	// Stale is true when the key was changed (PATCH) after the principal
	// was read: the caller reads it again from Postgres and admits again,
	// so that the new rate limit applies from this request on.
	Stale bool
	// Marks are the catalog's and the key's owned marks as this admission
	// read them, before anything the request reads from Postgres (zero
	// without Redis): copies made under them are trusted while they hold.
	Marks marks.Seen
}

// Gate admits requests: in one Redis command (admitScript) it checks the
// revocation markers of the key and its root, runs the GCRA rate limiter
// (redis_rate's script) and counts usage. When Redis is unreachable it falls back to an
// in-process limiter and in-process usage counting, and says so.
type Gate struct {
	rdb          *redis.Client
	prefix       string
	defaultLimit int
	logger       *slog.Logger
	now          func() time.Time

	fallbacks atomic.Int64
	local     localLimiters
	usage     *Usage
	epoch     epochWatch
}

// NewGate returns a gate over rdb and the keys under prefix
// (BROLL_REDIS_PREFIX), with perMinute the limit of a key without its own
// (BROLL_RATE_LIMIT_PER_MINUTE), counting every admitted request in usage
// and logging its fallbacks on logger. onDataLoss (nil: nothing) is what to
// do when Redis is seen to have lost its data, its revocation markers with
// it: the authenticator's Drop. It runs before Admit returns, so the caller
// can tell (Authenticator.Generation) whether the principal it holds was
// read before the drop.
func NewGate(rdb *redis.Client, prefix string, perMinute int, usage *Usage, logger *slog.Logger, onDataLoss func()) *Gate {
	return &Gate{
		rdb: rdb, prefix: prefix, defaultLimit: perMinute, logger: logger, now: time.Now,
		local: localLimiters{m: map[uuid.UUID]*rate.Limiter{}}, usage: usage, epoch: epochWatch{lost: onDataLoss},
	}
}

// Fallbacks counts decisions made without Redis since start.
func (g *Gate) Fallbacks() int64 { return g.fallbacks.Load() }

// LimitFor is the per-minute limit of a principal. Burst equals the limit: a
// client may spend its whole minute at once, then refills at limit/60 per
// second (GCRA), as docs/api.md promises (BROLL_RATE_LIMIT_PER_MINUTE).
func (g *Gate) LimitFor(p Principal) redis_rate.Limit {
	return redis_rate.PerMinute(cmp.Or(p.RateLimitPerMinute, g.defaultLimit))
}

func revokedKey(prefix string, id uuid.UUID) string { return prefix + "revoked:" + id.String() }

func changedKey(prefix string, id uuid.UUID) string { return prefix + "changed:" + id.String() }

// Admit decides one request of p.
func (g *Gate) Admit(ctx context.Context, p Principal) (Decision, error) {
	return g.admit(ctx, p, true)
}

// Readmit decides again, under p's new settings, a request that Admit
// found Stale: the request was counted in the usage counters already.
func (g *Gate) Readmit(ctx context.Context, p Principal) (Decision, error) {
	return g.admit(ctx, p, false)
}

func (g *Gate) admit(ctx context.Context, p Principal, count bool) (Decision, error) {
	limit := g.LimitFor(p)
	now := g.now()
	offered := randomToken()
	counting := "0"
	if count {
		counting = "1"
	}
	total, lastUse, hours := g.usage.countKeys()
	keys := []string{rateLimitKey(g.prefix, p.KeyID), epochKey(g.prefix), changedKey(g.prefix, p.KeyID), total, lastUse, hours,
		revokedKey(g.prefix, p.KeyID), revokedKey(g.prefix, p.RootKeyID),
		marks.TokenKey(g.prefix, marks.Catalog), marks.HeldKey(g.prefix, marks.Catalog),
		marks.TokenKey(g.prefix, marks.Owned(p.KeyID)), marks.HeldKey(g.prefix, marks.Owned(p.KeyID))}
	v, err := admitScript.Run(ctx, g.rdb, keys, limit.Burst, limit.Rate, limit.Period.Seconds(), offered, counting,
		p.KeyID.String(), now.UnixMilli(), hourField(p.KeyID, now)).Slice()
	if err != nil {
		return g.admitLocally(p, limit, now, err), nil
	}
	res, err := parseAdmitReply(v)
	if err != nil {
		return Decision{}, err
	}
	d := Decision{
		Revoked:    res.revoked > 0,
		Allowed:    res.allowed > 0 && res.revoked == 0,
		Limit:      limit.Rate,
		Remaining:  int(res.remaining),
		ResetAfter: res.resetAfter,
		RetryAfter: max(res.retryAfter, 0), // -1 when allowed
		Stale:      res.changed > p.SettingsVersion,
		Marks:      res.marks,
	}
	epoch := res.epoch
	switch {
	case res.epochMissing:
		epoch = offered
	case !res.epochOK:
		epoch = ""
	}
	if lost, first := g.epoch.check(epoch); lost {
		if !first {
			g.logger.Warn("redis lost its data (epoch changed): dropping the in-process auth cache")
		}
		g.epoch.onLoss()
	}
	return d, nil
}

func (g *Gate) admitLocally(p Principal, limit redis_rate.Limit, now time.Time, cause error) Decision {
	if g.fallbacks.Add(1)%100 == 1 {
		g.logger.Warn("redis unreachable: rate limiting with the in-process limiter", "error", cause.Error())
	}
	g.usage.countLocally(p.KeyID, now)
	lim := g.local.get(p.KeyID, limit)
	r := lim.ReserveN(now, 1)
	d := Decision{Limit: limit.Rate, Fallback: true}
	delay := r.DelayFrom(now)
	if delay > 0 {
		r.CancelAt(now)
		d.RetryAfter = delay
	} else {
		d.Allowed = true
	}
	tokens := lim.TokensAt(now)
	d.Remaining = int(math.Max(0, math.Floor(tokens)))
	missing := float64(limit.Burst) - tokens
	d.ResetAfter = time.Duration(missing / float64(limit.Rate) * float64(limit.Period))
	return d
}

// MarkChanged publishes a key's new settings version: a node holding an
// older copy of the key in its auth cache sees the marker in its next
// admission of that key (Decision.Stale) and reads the key again. The
// marker outlives every cache entry by far; a version only grows, so a
// late write of an older version never hides a newer one for long (the
// next change writes again).
func (g *Gate) MarkChanged(ctx context.Context, id uuid.UUID, version int64) error {
	return MarkChanged(ctx, g.rdb, g.prefix, id, version)
}

// MarkChanged is the Gate-free form used by the CLI.
func MarkChanged(ctx context.Context, rdb *redis.Client, prefix string, id uuid.UUID, version int64) error {
	return rdb.Set(ctx, changedKey(prefix, id), strconv.FormatInt(version, 10), 7*24*time.Hour).Err()
}

// MarkRevoked writes revocation markers so that every node refuses the keys
// on their next request, whatever their caches hold (Revoker writes them).
// Markers outlive every cache entry by far; after they expire the database
// says the same.
func MarkRevoked(ctx context.Context, rdb *redis.Client, prefix string, ids ...uuid.UUID) error {
	pipe := rdb.Pipeline()
	for _, id := range ids {
		pipe.Set(ctx, revokedKey(prefix, id), strconv.FormatInt(time.Now().Unix(), 10), 7*24*time.Hour)
	}
	_, err := pipe.Exec(ctx)
	return err
}

// localLimiters are this node's stand-in while Redis is unreachable: the
// same limit and burst, per key, but per node.
type localLimiters struct {
	mu sync.Mutex
	m  map[uuid.UUID]*rate.Limiter
}

func (l *localLimiters) get(id uuid.UUID, limit redis_rate.Limit) *rate.Limiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	every := rate.Limit(float64(limit.Rate) / limit.Period.Seconds())
	lim, ok := l.m[id]
	if !ok || lim.Burst() != limit.Burst || lim.Limit() != every {
		if len(l.m) > 100_000 {
			clear(l.m)
		}
		lim = rate.NewLimiter(every, limit.Burst)
		l.m[id] = lim
	}
	return lim
}
