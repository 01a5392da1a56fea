package tenancy

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Reading counters exact up to the last request without flushing: a
// request's count sits in the live Redis hashes until a flush renames them
// to the batch ("flushing") hashes, applies the batch to Postgres under its
// id (usage_flushes) and deletes the batch hashes. A reader adds to the
// stored counters the live counts and the batch's counts unless Postgres
// already holds that batch, which it learns in the same snapshot as the
// counters. Every batch taken bumps a generation number; a reader that sees
// it change (or the batch id change) while it reads may have counted one
// request twice and reads again.

// exactReadAttempts bounds the re-reads when flushes keep interleaving; after
// them the stored counters are returned as they are (a flush's worth stale).
// Flushes come a second or more apart, so a read is seldom taken again even
// once; the bound is for flushes back to back (a node catching up), where
// three attempts were seen to run out on a loaded machine.
const exactReadAttempts = 8

// readExact runs read, the Postgres read of some keys with their stored
// counters that also reports whether flush batch batch is applied, and adds
// what Redis holds that Postgres does not yet, for those keys only. On a nil
// Usage, or when Redis cannot be read, the stored counters are returned.
func (u *Usage) readExact(ctx context.Context, read func(ctx context.Context, batch string) ([]Key, bool, error)) ([]Key, error) {
	if u == nil {
		keys, _, err := read(ctx, "")
		return keys, err
	}
	for attempt := 1; ; attempt++ {
		gen, batch, err := u.mark(ctx)
		if err != nil {
			keys, _, err := read(ctx, "")
			u.addLocal(keys)
			return keys, err
		}
		keys, applied, err := read(ctx, batch)
		if err != nil {
			return nil, err
		}
		done, err := u.addPending(ctx, keys, gen, batch, applied)
		if err != nil || done || attempt == exactReadAttempts {
			u.addLocal(keys)
			return keys, nil
		}
	}
}

// mark reads the flush generation and the batch being flushed.
func (u *Usage) mark(ctx context.Context) (gen, batch string, err error) {
	pipe := u.rdb.Pipeline()
	g := pipe.Get(ctx, u.key("gen"))
	b := pipe.Get(ctx, u.key("flushing:id"))
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return "", "", err
	}
	return g.Val(), b.Val(), nil
}

// addPending adds to keys' counters, in one pipeline, the live counts and
// those of batch (unless applied), if no batch was taken since mark read
// gen and batch; it reports whether it did.
func (u *Usage) addPending(ctx context.Context, keys []Key, gen, batch string, applied bool) (bool, error) {
	if len(keys) == 0 {
		return true, nil
	}
	fields := make([]string, len(keys))
	for i, k := range keys {
		fields[i] = k.ID.String()
	}
	pipe := u.rdb.Pipeline()
	g := pipe.Get(ctx, u.key("gen"))
	b := pipe.Get(ctx, u.key("flushing:id"))
	n := pipe.HMGet(ctx, u.key("n"), fields...)
	t := pipe.HMGet(ctx, u.key("t"), fields...)
	var fn, ft *redis.SliceCmd
	if batch != "" && !applied {
		fn = pipe.HMGet(ctx, u.key("flushing:n"), fields...)
		ft = pipe.HMGet(ctx, u.key("flushing:t"), fields...)
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return false, err
	}
	if g.Val() != gen || b.Val() != batch {
		return false, nil
	}
	add := func(counts, times *redis.SliceCmd) {
		if counts == nil {
			return
		}
		for i := range keys {
			if c, ok := redisInt(counts.Val(), i); ok {
				keys[i].TotalRequests += c
			}
			if ms, ok := redisInt(times.Val(), i); ok {
				if at := time.UnixMilli(ms).UTC(); keys[i].LastUsedAt == nil || at.After(*keys[i].LastUsedAt) {
					keys[i].LastUsedAt = &at
				}
			}
		}
	}
	add(n, t)
	add(fn, ft)
	return true, nil
}

// addLocal adds what this node counted in memory while Redis was
// unreachable and has not flushed yet. Another node's such counts show
// after that node's next flush.
func (u *Usage) addLocal(keys []Key) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for i := range keys {
		c, ok := u.local[keys[i].ID]
		if !ok {
			continue
		}
		keys[i].TotalRequests += c.n
		if at := c.last.UTC(); keys[i].LastUsedAt == nil || at.After(*keys[i].LastUsedAt) {
			keys[i].LastUsedAt = &at
		}
	}
}

// redisInt reads the i-th reply of an HMGET as a whole number; a missing
// field is nil.
func redisInt(vals []any, i int) (int64, bool) {
	if i >= len(vals) {
		return 0, false
	}
	s, ok := vals[i].(string)
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}
