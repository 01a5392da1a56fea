package idempotency_test

import (
	"context"
	"testing"
	"time"

	"broll/billing/billingtest"
	"broll/internal/idempotency"
	"broll/internal/testkit"
)

// TestStaleTakerIsNotAnOrphan: a request that took over a stale row runs
// WITHOUT the key's lock (the stuck owner still held it). Once the stuck
// owner's session lets the lock go, the next request with the key gets the
// lock, finds the row unfinished and takes it for an orphan ("every owner
// holds the lock while it runs"), although the stale taker is alive and its
// row is fresh: two requests with one key run at once.
func TestStaleTakerIsNotAnOrphan(t *testing.T) {
	t.Parallel()
	pool, _ := testkit.NewPool(t)
	ctx := context.Background()
	acct := billingtest.NewAccount(t, pool, billingtest.AccountOpts{})
	key := acct.Root.KeyID
	hash := idempotency.Hash("POST", "/x", []byte("a"))
	s := idempotency.New(pool, testSealer(t), idempotency.StoreOptions{Wait: 300 * time.Millisecond, Stale: time.Minute})

	// A claims the key (lock + row) and gets stuck past the stale time.
	a, _, err := s.Begin(ctx, key, "k", hash)
	if err != nil || a == nil {
		t.Fatalf("first claim: %v", err)
	}
	if _, err := pool.Exec(ctx, `UPDATE idempotency_keys SET created_at = now() - interval '3 minutes' WHERE api_key_id = $1`, key); err != nil {
		t.Fatal(err)
	}
	// B, a retry, takes the stale row over; A still holds the lock, so B runs without it.
	b, _, err := s.Begin(ctx, key, "k", hash)
	if err != nil || b == nil {
		t.Fatalf("stale takeover: %v", err)
	}
	t.Cleanup(func() { _ = b.Release(ctx) })
	// A's session finally ends (its request returns late, or the server drops
	// the session): its settling is a no-op on B's row, and the lock is free.
	_ = a.Release(ctx)

	// C, another retry, while B (fresh, alive) is still running.
	c, stored, err := s.Begin(ctx, key, "k", hash)
	if c != nil {
		_ = c.Release(ctx)
		t.Fatal("the key was handed out while the stale taker still runs: two requests with one key at once")
	}
	if !isInUse(err) {
		t.Fatalf("want idempotency_key_in_use, got stored %+v err %v", stored, err)
	}
}
