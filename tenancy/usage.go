package tenancy

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"broll/internal/database"
)

// Usage counts requests per key without a Postgres write per request: each
// request adds to three Redis hashes (in the admission's round trip: the total,
// the last use and the key's bucket of the current hour), and Flush moves the
// counts into api_keys and usage_hourly in batches. A batch id stored with
// the update makes a flush that died half way safe to repeat: it is applied
// once.
type Usage struct {
	pool   *pgxpool.Pool
	rdb    *redis.Client
	prefix string

	mu    sync.Mutex
	local map[uuid.UUID]localCount // counted while Redis was unreachable
}

type localCount struct {
	n     int64
	last  time.Time
	hours map[int64]int64 // unix second of the hour -> requests
}

// NewUsage returns the usage counter: it counts in rdb under prefix
// (BROLL_REDIS_PREFIX), in this process while Redis is away, and Run
// flushes the counts to pool.
func NewUsage(pool *pgxpool.Pool, rdb *redis.Client, prefix string) *Usage {
	return &Usage{pool: pool, rdb: rdb, prefix: prefix, local: map[uuid.UUID]localCount{}}
}

func (u *Usage) key(name string) string { return u.prefix + "usage:" + name }

// CountKeys are the three hashes the admission counts a request of id at
// now in (admission.Counter): requests by key id, the last use (Unix ms)
// by key id, and requests by hourField, whose field for the request is
// hour.
func (u *Usage) CountKeys(id uuid.UUID, now time.Time) (total, lastUse, hours, hour string) {
	return u.key("n"), u.key("t"), u.key("h"), hourField(id, now)
}

// hourField names a key's bucket of one hour in the hourly hash:
// "<key id>|<unix second the hour starts>".
func hourField(id uuid.UUID, t time.Time) string {
	return id.String() + "|" + strconv.FormatInt(hourOf(t).Unix(), 10)
}

func parseHourField(f string) (uuid.UUID, time.Time, bool) {
	idStr, hourStr, ok := strings.Cut(f, "|")
	if !ok {
		return uuid.Nil, time.Time{}, false
	}
	id, err := uuid.Parse(idStr)
	if err != nil {
		return uuid.Nil, time.Time{}, false
	}
	sec, err := strconv.ParseInt(hourStr, 10, 64)
	if err != nil || sec%3600 != 0 {
		return uuid.Nil, time.Time{}, false
	}
	return id, time.Unix(sec, 0).UTC(), true
}

// hourOf is the start of t's hour in UTC.
func hourOf(t time.Time) time.Time { return t.UTC().Truncate(time.Hour) }

// CountLocally counts a request of id at now in this process, while Redis
// is away (admission.Counter); the next Flush writes it.
func (u *Usage) CountLocally(id uuid.UUID, now time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	c := u.local[id]
	c.n++
	if now.After(c.last) {
		c.last = now
	}
	if c.hours == nil {
		c.hours = map[int64]int64{}
	}
	c.hours[hourOf(now).Unix()]++
	u.local[id] = c
}

// takeBatch atomically moves the live counters aside under a batch id, or
// returns the batch a previous flush left behind. KEYS[1..3] are the live
// hashes (totals, last use, hourly buckets), KEYS[4..6] their batch copies,
// KEYS[7] the batch id and KEYS[8] the generation, bumped by every batch
// taken so that readers of unflushed counts notice a flush (usage_pending.go).
var takeBatch = redis.NewScript(`
if redis.call('EXISTS', KEYS[7]) == 0 then
  local any = false
  for i = 1, 3 do
    if redis.call('EXISTS', KEYS[i]) == 1 then
      redis.call('RENAME', KEYS[i], KEYS[i + 3])
      any = true
    end
  end
  if not any then return false end
  redis.call('SET', KEYS[7], ARGV[1])
  redis.call('INCR', KEYS[8])
end
return {redis.call('GET', KEYS[7]), redis.call('HGETALL', KEYS[4]), redis.call('HGETALL', KEYS[5]),
        redis.call('HGETALL', KEYS[6])}
`)

// dropBatch deletes the batch keys KEYS[1..4] (KEYS[4] the batch id) if
// the batch is still ARGV[1]: a flusher whose lock lapsed must not delete
// a batch taken after its own.
var dropBatch = redis.NewScript(`
if redis.call('GET', KEYS[4]) == ARGV[1] then return redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4]) end
return 0`)

var releaseLock = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`)

// usageBatch is one flush's worth of counts, in the column arrays the
// statements take.
type usageBatch struct {
	ids   []uuid.UUID
	ns    []int64
	ts    []time.Time
	hIDs  []uuid.UUID
	hours []time.Time
	hNs   []int64
}

func (b *usageBatch) addHour(id uuid.UUID, hour time.Time, n int64) {
	b.hIDs, b.hours, b.hNs = append(b.hIDs, id), append(b.hours, hour), append(b.hNs, n)
}

func (b *usageBatch) apply(ctx context.Context, q Querier) error {
	if len(b.ids) > 0 {
		if _, err := q.Exec(ctx, applyUsageSQL, b.ids, b.ns, b.ts); err != nil {
			return err
		}
	}
	if len(b.hIDs) > 0 {
		if _, err := q.Exec(ctx, applyHourlySQL, b.hIDs, b.hours, b.hNs); err != nil {
			return err
		}
	}
	return nil
}

// Flush writes the buffered counts to Postgres. Nodes and workers may call
// it concurrently: a short Redis lock makes them take turns. GET
// /api/v1/keys does not flush for exact numbers: it adds the unflushed
// counts of the keys it shows (usage_pending.go).
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

// batchKeys are takeBatch's KEYS, in its order; [3:7] are the batch's own.
func (u *Usage) batchKeys() []string {
	return []string{u.key("n"), u.key("t"), u.key("h"),
		u.key("flushing:n"), u.key("flushing:t"), u.key("flushing:h"), u.key("flushing:id"), u.key("gen")}
}

func (u *Usage) flushBatch(ctx context.Context) error {
	keys := u.batchKeys()
	res, err := takeBatch.Run(ctx, u.rdb, keys, randomToken()).Result()
	if errors.Is(err, redis.Nil) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("usage flush: %w", err)
	}
	parts, _ := res.([]any)
	if len(parts) != 4 {
		return errors.New("usage flush: unexpected reply")
	}
	batchID, _ := parts[0].(string)
	counts := pairs(parts[1])
	times := pairs(parts[2])

	var b usageBatch
	for field, nStr := range counts {
		id, err := uuid.Parse(field)
		if err != nil {
			continue
		}
		n, _ := strconv.ParseInt(nStr, 10, 64)
		ms, _ := strconv.ParseInt(times[field], 10, 64)
		b.ids, b.ns, b.ts = append(b.ids, id), append(b.ns, n), append(b.ts, time.UnixMilli(ms))
	}
	for field, nStr := range pairs(parts[3]) {
		id, hour, ok := parseHourField(field)
		n, err := strconv.ParseInt(nStr, 10, 64)
		if !ok || err != nil || n <= 0 {
			continue
		}
		b.addHour(id, hour, n)
	}
	err = database.InTx(ctx, u.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, usageFlushSQL, batchID)
		if err != nil || tag.RowsAffected() == 0 {
			return err // applied before: only the Redis cleanup was missing
		}
		return b.apply(ctx, tx)
	})
	if err != nil {
		return fmt.Errorf("usage flush: %w", err)
	}
	return dropBatch.Run(ctx, u.rdb, keys[3:7], batchID).Err()
}

func (u *Usage) flushLocal(ctx context.Context) error {
	u.mu.Lock()
	taken := u.local
	u.local = map[uuid.UUID]localCount{}
	u.mu.Unlock()
	if len(taken) == 0 {
		return nil
	}
	var b usageBatch
	for id, c := range taken {
		b.ids, b.ns, b.ts = append(b.ids, id), append(b.ns, c.n), append(b.ts, c.last)
		for hour, n := range c.hours {
			b.addHour(id, time.Unix(hour, 0).UTC(), n)
		}
	}
	if err := database.InTx(ctx, u.pool, func(tx pgx.Tx) error { return b.apply(ctx, tx) }); err != nil {
		u.mu.Lock()
		for id, c := range taken {
			l := u.local[id]
			l.n += c.n
			if c.last.After(l.last) {
				l.last = c.last
			}
			for hour, n := range c.hours {
				if l.hours == nil {
					l.hours = map[int64]int64{}
				}
				l.hours[hour] += n
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

// pairs reads an HGETALL reply from takeBatch. A script's redis.call
// speaks RESP2 (the script never calls redis.setresp), so the reply is a
// flat list of fields and values even on a RESP3 connection.
func pairs(v any) map[string]string {
	x, _ := v.([]any)
	out := map[string]string{}
	for i := 0; i+1 < len(x); i += 2 {
		k, _ := x[i].(string)
		val, _ := x[i+1].(string)
		out[k] = val
	}
	return out
}

// randomToken is 128 random bits in hex: flush batch ids.
func randomToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
