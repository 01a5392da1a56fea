package tenancy

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"broll/internal/database"
)

// Usage counts requests per key without a Postgres write per request: each
// request adds to two Redis hashes (in the Gate's round trip), and Flush
// moves the counts into api_keys in batches. A batch id stored with the
// update makes a flush that died half way safe to repeat: it is applied once.
type Usage struct {
	pool   *pgxpool.Pool
	rdb    *redis.Client
	prefix string

	mu    sync.Mutex
	local map[uuid.UUID]localCount // counted while Redis was unreachable
}

type localCount struct {
	n    int64
	last time.Time
}

// NewUsage returns the usage counter.
func NewUsage(pool *pgxpool.Pool, rdb *redis.Client, prefix string) *Usage {
	return &Usage{pool: pool, rdb: rdb, prefix: prefix, local: map[uuid.UUID]localCount{}}
}

func (u *Usage) key(name string) string { return u.prefix + "usage:" + name }

func (u *Usage) count(ctx context.Context, pipe redis.Pipeliner, id uuid.UUID, now time.Time) {
	field := id.String()
	pipe.HIncrBy(ctx, u.key("n"), field, 1)
	pipe.HSet(ctx, u.key("t"), field, now.UnixMilli())
}

func (u *Usage) countLocally(id uuid.UUID, now time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	c := u.local[id]
	c.n++
	if now.After(c.last) {
		c.last = now
	}
	u.local[id] = c
}

// takeBatch atomically moves the live counters aside under a batch id, or
// returns the batch a previous flush left behind.
var takeBatch = redis.NewScript(`
if redis.call('EXISTS', KEYS[5]) == 0 then
  if redis.call('EXISTS', KEYS[1]) == 0 and redis.call('EXISTS', KEYS[2]) == 0 then return false end
  if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('RENAME', KEYS[1], KEYS[3]) end
  if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('RENAME', KEYS[2], KEYS[4]) end
  redis.call('SET', KEYS[5], ARGV[1])
end
return {redis.call('GET', KEYS[5]), redis.call('HGETALL', KEYS[3]), redis.call('HGETALL', KEYS[4])}
`)

var releaseLock = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`)

const applyUsageSQL = `
	UPDATE api_keys k
	SET total_requests = k.total_requests + u.n,
	    last_used_at = greatest(coalesce(k.last_used_at, u.t), u.t)
	FROM unnest($1::uuid[], $2::bigint[], $3::timestamptz[]) AS u(id, n, t)
	WHERE k.id = u.id`

// Flush writes the buffered counts to Postgres. Nodes and workers may call
// it concurrently: a short Redis lock makes them take turns, and a caller
// that needs exact numbers (GET /api/v1/keys) waits for its turn.
func (u *Usage) Flush(ctx context.Context) error {
	if err := u.flushLocal(ctx); err != nil {
		return err
	}
	token := randomToken()
	lockKey := u.key("lock")
	deadline := time.Now().Add(5 * time.Second)
	for {
		ok, err := u.rdb.SetNX(ctx, lockKey, token, 30*time.Second).Result()
		if err != nil {
			return fmt.Errorf("usage flush: %w", err)
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			return errors.New("usage flush: lock busy")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	defer releaseLock.Run(context.WithoutCancel(ctx), u.rdb, []string{lockKey}, token)
	return u.flushBatch(ctx)
}

func (u *Usage) flushBatch(ctx context.Context) error {
	keys := []string{u.key("n"), u.key("t"), u.key("flushing:n"), u.key("flushing:t"), u.key("flushing:id")}
	res, err := takeBatch.Run(ctx, u.rdb, keys, randomToken()).Result()
	if errors.Is(err, redis.Nil) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("usage flush: %w", err)
	}
	parts, _ := res.([]any)
	if len(parts) != 3 {
		return errors.New("usage flush: unexpected reply")
	}
	batchID, _ := parts[0].(string)
	counts := pairs(parts[1])
	times := pairs(parts[2])

	var ids []uuid.UUID
	var ns []int64
	var ts []time.Time
	for field, nStr := range counts {
		id, err := uuid.Parse(field)
		if err != nil {
			continue
		}
		n, _ := strconv.ParseInt(nStr, 10, 64)
		ms, _ := strconv.ParseInt(times[field], 10, 64)
		ids, ns, ts = append(ids, id), append(ns, n), append(ts, time.UnixMilli(ms))
	}
	err = database.InTx(ctx, u.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO usage_flushes (batch_id) VALUES ($1) ON CONFLICT DO NOTHING`, batchID)
		if err != nil || tag.RowsAffected() == 0 {
			return err // applied before: only the Redis cleanup was missing
		}
		_, err = tx.Exec(ctx, applyUsageSQL, ids, ns, ts)
		return err
	})
	if err != nil {
		return fmt.Errorf("usage flush: %w", err)
	}
	return u.rdb.Del(ctx, keys[2], keys[3], keys[4]).Err()
}

func (u *Usage) flushLocal(ctx context.Context) error {
	u.mu.Lock()
	taken := u.local
	u.local = map[uuid.UUID]localCount{}
	u.mu.Unlock()
	if len(taken) == 0 {
		return nil
	}
	var ids []uuid.UUID
	var ns []int64
	var ts []time.Time
	for id, c := range taken {
		ids, ns, ts = append(ids, id), append(ns, c.n), append(ts, c.last)
	}
	if _, err := u.pool.Exec(ctx, applyUsageSQL, ids, ns, ts); err != nil {
		u.mu.Lock()
		for id, c := range taken {
			l := u.local[id]
			l.n += c.n
			if c.last.After(l.last) {
				l.last = c.last
			}
			u.local[id] = l
		}
		u.mu.Unlock()
		return fmt.Errorf("usage flush: %w", err)
	}
	return nil
}

// Run flushes every interval until ctx ends, then once more.
func (u *Usage) Run(ctx context.Context, interval time.Duration, onErr func(error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			if err := u.Flush(fctx); err != nil && onErr != nil {
				onErr(err)
			}
			cancel()
			return
		case <-t.C:
			if err := u.Flush(ctx); err != nil && onErr != nil && ctx.Err() == nil {
				onErr(err)
			}
		}
	}
}

func pairs(v any) map[string]string {
	out := map[string]string{}
	switch x := v.(type) {
	case []any:
		for i := 0; i+1 < len(x); i += 2 {
			k, _ := x[i].(string)
			val, _ := x[i+1].(string)
			out[k] = val
		}
	case map[any]any: // RESP3
		for k, val := range x {
			ks, _ := k.(string)
			vs, _ := val.(string)
			out[ks] = vs
		}
	}
	return out
}

func randomToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
