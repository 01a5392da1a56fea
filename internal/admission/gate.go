package admission

import (
	"cmp"
	"context"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"golang.org/x/time/rate"

	"broll/internal/admission/marks"
)

// Gate admits requests: in one Redis command (admitScript) it checks the
// revocation markers of the key and its root, runs the GCRA rate limiter
// (redis_rate's script), counts usage and reads the marks of what the
// request may read from copies. When Redis is unreachable it falls back to
// an in-process limiter and in-process usage counting, and says so.
type Gate struct {
	rdb *redis.Client
	// admissions runs the admission script: the client's autopipeliner,
	// which sends the admissions of concurrent requests to Redis together
	// (one write and one read for many, a lone one at once), or the client
	// itself where that cannot be had.
	admissions   redis.Scripter
	prefix       string
	defaultLimit int
	logger       *slog.Logger
	now          func() time.Time

	fallbacks atomic.Int64
	local     localLimiters
	usage     Counter
	epoch     epochWatch
	// marks tell every node what changed; holds what changed here.
	marks *marks.Marks
	holds *holds
}

// GateOptions are what a gate may be given beyond its Redis, key prefix
// and counter; the zero value is usable.
type GateOptions struct {
	// PerMinute is the limit of a key without its own
	// (BROLL_RATE_LIMIT_PER_MINUTE).
	PerMinute int
	// Logger logs the fallbacks and the marks' failures; nil: discarded.
	Logger *slog.Logger
	// OnDataLoss (nil: nothing) is what to do when Redis is seen to have
	// lost its data, its revocation markers with it: the authenticator's
	// Drop. It runs before Admit returns, so the caller can tell
	// (Authenticator.Generation) whether the principal it holds was read
	// before the drop.
	OnDataLoss func()
	// Now is the clock of the usage counts; nil: time.Now.
	Now func() time.Time
}

// NewGate returns a gate over rdb and the keys under prefix
// (BROLL_REDIS_PREFIX), counting every admitted request in usage; Close
// stops what its holds retry in the background.
func NewGate(rdb *redis.Client, prefix string, usage Counter, o GateOptions) *Gate {
	logger, now := o.Logger, o.Now
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if now == nil {
		now = time.Now
	}
	g := &Gate{
		rdb: rdb, admissions: rdb, prefix: prefix, defaultLimit: o.PerMinute, logger: logger, now: now,
		local: localLimiters{m: map[uuid.UUID]*rate.Limiter{}}, usage: usage, epoch: epochWatch{lost: o.OnDataLoss},
		marks: marks.New(rdb, prefix, marks.MarksOptions{Logger: logger}), holds: newHolds(),
	}
	// The autopipeliner belongs to the client and stops when it closes.
	if ap, err := rdb.AutoPipeline(); err == nil {
		g.admissions = ap
	} else {
		logger.Warn("redis: admissions go one by one", "error", err.Error())
	}
	return g
}

// Close stops the background retries of releases and waits for them: the
// process is ending, and the holds it could not release lapse by
// themselves. Call it before the Redis client closes.
func (g *Gate) Close() { g.marks.Close() }

// Fallbacks counts decisions made without Redis since start.
func (g *Gate) Fallbacks() int64 { return g.fallbacks.Load() }

// LimitFor is the per-minute limit of a caller. Burst equals the limit: a
// client may spend its whole minute at once, then refills at limit/60 per
// second (GCRA), as docs/api.md promises (BROLL_RATE_LIMIT_PER_MINUTE).
func (g *Gate) LimitFor(c Caller) redis_rate.Limit {
	return redis_rate.PerMinute(cmp.Or(c.RateLimitPerMinute, g.defaultLimit))
}

// Admit decides one request of c, and reads the marks for its pass: the
// request may answer from this node's copies (Decision.Pass).
func (g *Gate) Admit(ctx context.Context, c Caller) (Decision, error) {
	return g.admit(ctx, c, true, true)
}

// AdmitWithoutCopies decides one request of c that reads no copies (a
// purchase, a key change): it reads no marks, which saves Redis two
// lookups, and its pass trusts nothing.
func (g *Gate) AdmitWithoutCopies(ctx context.Context, c Caller) (Decision, error) {
	return g.admit(ctx, c, true, false)
}

// Readmit decides again, under c's new settings, a request that Admit (or,
// with copies false, AdmitWithoutCopies) found Stale: the request was
// counted in the usage counters already.
func (g *Gate) Readmit(ctx context.Context, c Caller, copies bool) (Decision, error) {
	return g.admit(ctx, c, false, copies)
}

func (g *Gate) admit(ctx context.Context, c Caller, count, copies bool) (Decision, error) {
	limit := g.LimitFor(c)
	now := g.now()
	offered := randomToken()
	counting, reading := "0", "0"
	if count {
		counting = "1"
	}
	if copies {
		reading = "1"
	}
	// Before Redis is read: a hold taken here meanwhile ends the pass.
	at := g.holds.now()
	total, lastUse, hours, hour := g.usage.CountKeys(c.KeyID, now)
	keys := []string{rateLimitKey(g.prefix, c.KeyID), epochKey(g.prefix), changedKey(g.prefix, c.KeyID), total, lastUse, hours,
		revokedKey(g.prefix, c.KeyID), revokedKey(g.prefix, c.RootKeyID),
		marks.TokenKey(g.prefix, marks.Catalog), marks.HeldKey(g.prefix, marks.Catalog),
		marks.TokenKey(g.prefix, marks.Owned(c.KeyID)), marks.HeldKey(g.prefix, marks.Owned(c.KeyID))}
	v, err := admitScript.Run(ctx, g.admissions, keys, limit.Burst, limit.Rate, limit.Period.Seconds(), offered, counting,
		c.KeyID.String(), now.UnixMilli(), hour, reading).Slice()
	if err != nil {
		return g.admitLocally(c, limit, now, err), nil
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
		Stale:      res.changed > c.SettingsVersion,
		Pass:       Pass{catalog: res.marks.Catalog, owned: res.marks.Owned, key: c.KeyID, at: at, holds: g.holds},
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

func (g *Gate) admitLocally(c Caller, limit redis_rate.Limit, now time.Time, cause error) Decision {
	if g.fallbacks.Add(1)%100 == 1 {
		g.logger.Warn("redis unreachable: rate limiting with the in-process limiter", "error", cause.Error())
	}
	g.usage.CountLocally(c.KeyID, now)
	lim := g.local.get(c.KeyID, limit)
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
