package tenancy

import (
	"context"
	"errors"
	"testing"
	"time"

	"broll/internal/database"
)

// TestUsageLapsedFlusherKeepsOffTheNextBatch: the flush lock is a 30 s
// lease that is never renewed. A flusher (A) whose lease lapsed while its
// batch X was in flight still ends with an unconditional DEL of the batch
// keys. By then X was applied by the flusher that took the lock after it
// (B), and a third flusher (C) has taken the next batch Y: A's DEL removes
// Y from Redis. If C then fails (its context ends, Postgres is away), Y is
// no longer "left behind for the next flush": its requests are lost.
func TestUsageLapsedFlusherKeepsOffTheNextBatch(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	p := b.account(t)
	url := b.pool.Config().ConnString()

	// Nodes A and C each with a one-connection pool the test holds, so each
	// stalls right after takeBatch (in its transaction's BEGIN).
	node := func() (*Usage, func()) {
		pool, err := database.Open(ctx, url+"&pool_max_conns=1")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		conn, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return NewUsage(pool, b.rdb, b.prefix), conn.Release
	}
	keys := b.usage.batchKeys()
	lockKey := b.usage.key("lock")
	batchTaken := func(not string) string {
		t.Helper()
		for range 500 {
			if id, err := b.rdb.Get(ctx, keys[6]).Result(); err == nil && id != not {
				return id
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatal("no batch taken")
		return ""
	}

	b.admit(t, p, 3) // batch X
	uA, freeA := node()
	doneA := make(chan error, 1)
	go func() { doneA <- uA.Flush(ctx) }()
	x := batchTaken("")

	// A stalls past its lease: 30 s pass (here: the lease is made to lapse).
	if err := b.rdb.PExpire(ctx, lockKey, time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	// B takes the lock, finds X left behind and applies it.
	if err := b.usage.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	b.admit(t, p, 2) // batch Y
	uC, freeC := node()
	cctx, cancelC := context.WithCancel(ctx)
	doneC := make(chan error, 1)
	go func() { doneC <- uC.Flush(cctx) }()
	batchTaken(x)

	// A wakes up: X is applied already (no row), and A cleans up.
	freeA()
	if err := <-doneA; err != nil {
		t.Fatalf("A: %v", err)
	}
	// C fails before its commit: Y should stay in Redis for the next flush.
	cancelC()
	if err := <-doneC; !errors.Is(err, context.Canceled) {
		t.Fatalf("C: want context canceled, got %v", err)
	}
	freeC()

	if err := b.usage.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	k, err := b.svc.GetKey(ctx, p.KeyID)
	if err != nil {
		t.Fatal(err)
	}
	if k.TotalRequests != 5 {
		t.Fatalf("total_requests %d, want 5: the batch taken after the lapsed flusher's was deleted by it and lost", k.TotalRequests)
	}
}
