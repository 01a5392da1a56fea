package tenancy

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"broll/internal/admission"
)

func (b *bundle) admit(t testing.TB, p Principal, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		if _, err := b.gate.Admit(context.Background(), p.Caller()); err != nil {
			t.Fatal(err)
		}
	}
}

func (b *bundle) hourly(t *testing.T, key uuid.UUID) map[time.Time]int64 {
	t.Helper()
	rows, err := b.pool.Query(context.Background(), `SELECT hour, requests FROM usage_hourly WHERE api_key_id = $1`, key)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[time.Time]int64{}
	for rows.Next() {
		var h time.Time
		var n int64
		if err := rows.Scan(&h, &n); err != nil {
			t.Fatal(err)
		}
		out[h.UTC()] = n
	}
	return out
}

// TestUsageHourlyBuckets: requests are counted per key and hour in the
// gate's round trip, flushed with the totals, and summed per account.
func TestUsageHourlyBuckets(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	p := b.account(t)
	other := b.account(t)
	now := b.clock.Now()

	b.clock.Advance(-3 * time.Hour)
	b.admit(t, p, 2)
	b.clock.Advance(3 * time.Hour)
	b.admit(t, p, 5)
	b.admit(t, other, 7)
	if err := b.usage.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got := b.hourly(t, p.KeyID)
	if got[hourOf(now)] != 5 || got[hourOf(now.Add(-3*time.Hour))] != 2 || len(got) != 2 {
		t.Fatalf("hourly buckets: %v", got)
	}
	k, err := b.svc.GetKey(ctx, p.KeyID)
	if err != nil || k.TotalRequests != 7 {
		t.Fatalf("total_requests %d %v", k.TotalRequests, err)
	}

	// A second flush with nothing buffered adds nothing.
	if err := b.usage.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := b.hourly(t, p.KeyID); got[hourOf(now)] != 5 {
		t.Fatalf("after an empty flush: %v", got)
	}

	hours, err := b.svc.RequestsByHour(ctx, p.AccountID, now, 24)
	if err != nil {
		t.Fatal(err)
	}
	if len(hours) != 24 || !hours[23].Hour.Equal(hourOf(now)) || hours[23].Requests != 5 || hours[20].Requests != 2 {
		t.Fatalf("requests by hour: %+v", hours)
	}
	var sum int64
	for _, h := range hours {
		sum += h.Requests
	}
	if sum != 7 {
		t.Fatalf("account sum %d, want 7 (the other account's requests are not counted)", sum)
	}
	// Buckets older than the window are left out.
	if hours, _ := b.svc.RequestsByHour(ctx, p.AccountID, now, 3); len(hours) != 3 || hours[0].Requests != 0 {
		t.Fatalf("3-hour window: %+v", hours)
	}
}

// TestUsageFlushAppliesABatchOnce: a batch whose transaction committed but
// whose Redis cleanup was lost is not applied a second time.
func TestUsageFlushAppliesABatchOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	p := b.account(t)
	b.admit(t, p, 4)

	keys := b.usage.batchKeys()
	if err := takeBatch.Run(ctx, b.rdb, keys, "batch-1").Err(); err != nil {
		t.Fatal(err)
	}
	// The earlier attempt committed this batch, then died.
	if _, err := b.pool.Exec(ctx, `INSERT INTO usage_flushes (batch_id) VALUES ('batch-1')`); err != nil {
		t.Fatal(err)
	}
	b.admit(t, p, 1) // a live counter beside the leftover batch
	if err := b.usage.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := b.hourly(t, p.KeyID); len(got) != 0 {
		t.Fatalf("leftover batch applied again: %v", got)
	}
	if n, _ := b.rdb.Exists(ctx, keys[3:7]...).Result(); n != 0 {
		t.Fatalf("leftover batch still in Redis (%d keys)", n)
	}
	if err := b.usage.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := b.hourly(t, p.KeyID); got[hourOf(b.clock.Now())] != 1 {
		t.Fatalf("live counter after the leftover batch: %v", got)
	}
}

// TestUsageHourlyWithoutRedis: requests admitted while Redis is down are
// counted in process, hourly buckets included, and flushed straight to
// Postgres.
func TestUsageHourlyWithoutRedis(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	p := b.account(t)
	down := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 100 * time.Millisecond,
		DialerRetries: 1, DialerRetryTimeout: time.Millisecond})
	t.Cleanup(func() { _ = down.Close() })
	usage := NewUsage(b.pool, down, b.prefix)
	gate := admission.NewGate(down, b.prefix, usage, admission.GateOptions{PerMinute: 60, Now: b.clock.Now})
	for i := 0; i < 3; i++ {
		if d, err := gate.Admit(ctx, p.Caller()); err != nil || !d.Fallback {
			t.Fatalf("admit without Redis: %+v %v", d, err)
		}
	}
	_ = usage.Flush(ctx) // the Redis half fails; the local half is written
	if got := b.hourly(t, p.KeyID); got[hourOf(b.clock.Now())] != 3 {
		t.Fatalf("hourly after a local flush: %v", got)
	}
}
