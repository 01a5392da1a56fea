package redisx

import (
	"context"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
)

// Scripter is what redis_rate's limiter calls on Redis (its own interface
// is unexported): *redis.Client has it, and so has a wrapper that sends the
// limiter's script in a pipeline with other commands.
type Scripter interface {
	Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd
	EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd
	EvalRO(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd
	EvalShaRO(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd
	ScriptExists(ctx context.Context, hashes ...string) *redis.BoolSliceCmd
	ScriptLoad(ctx context.Context, script string) *redis.StringCmd
	Del(ctx context.Context, keys ...string) *redis.IntCmd
}

// Limiter returns a redis_rate limiter over r whose keys start with prefix
// (BROLL_REDIS_PREFIX): redis_rate names its keys "rate:<key>" whatever the
// caller's prefix, so without this the limiter state of two deployments
// (or two tests) on one Redis database would be one state.
func Limiter(r Scripter, prefix string) *redis_rate.Limiter {
	return redis_rate.NewLimiter(prefixed{Scripter: r, prefix: prefix})
}

// LimiterKey is the Redis key under which Limiter(r, prefix) keeps key's
// allowance: redis_rate's own "rate:" ahead of key, and prefix ahead of
// both. Code that runs the limiter's script itself (tenancy's admission)
// names the state with it, so both spend one allowance.
func LimiterKey(prefix, key string) string { return prefix + "rate:" + key }

// prefixed puts prefix before every key the limiter names.
type prefixed struct {
	Scripter
	prefix string
}

func (p prefixed) keys(keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = p.prefix + k
	}
	return out
}

func (p prefixed) Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	return p.Scripter.Eval(ctx, script, p.keys(keys), args...)
}

func (p prefixed) EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd {
	return p.Scripter.EvalSha(ctx, sha1, p.keys(keys), args...)
}

func (p prefixed) EvalRO(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	return p.Scripter.EvalRO(ctx, script, p.keys(keys), args...)
}

func (p prefixed) EvalShaRO(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd {
	return p.Scripter.EvalShaRO(ctx, sha1, p.keys(keys), args...)
}

func (p prefixed) Del(ctx context.Context, keys ...string) *redis.IntCmd {
	return p.Scripter.Del(ctx, p.keys(keys)...)
}
