package worker_test

import (
	"context"
	"testing"
	"time"

	"broll/billing/billingtest"
	"broll/collections"
	"broll/embed"
	"broll/wiring/wiringtest"
	"broll/worker"
)

// TestWorkerSweepsRevokedKeysCollections: with a one-second retention and
// a sweep every 100 ms, a running worker removes a revoked key's
// collection once the second has passed, and leaves a live key's alone.
func TestWorkerSweepsRevokedKeysCollections(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.cfg.CollectionRetention = time.Second
	ctx := context.Background()
	svc := wiringtest.Over(t, e.pool).Collections
	a := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{})
	gone := billingtest.Principal(a, a.CustomerKey(t, e.pool, "leaving"))
	stays := billingtest.Principal(a, a.CustomerKey(t, e.pool, "staying"))
	swept, err := svc.Create(ctx, gone, collections.CreateRequest{Name: "old"})
	if err != nil {
		t.Fatal(err)
	}
	kept, err := svc.Create(ctx, stays, collections.CreateRequest{Name: "current"})
	if err != nil {
		t.Fatal(err)
	}
	revoked := time.Now() // no later than the row's revoked_at
	if _, err := e.pool.Exec(ctx, `UPDATE api_keys SET revoked_at = now() WHERE id = $1`, gone.KeyID); err != nil {
		t.Fatal(err)
	}
	e.start(t, embed.NewBuiltin(), worker.Options{CollectionSweepInterval: 100 * time.Millisecond})
	for {
		var left int
		if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM collections WHERE id = $1`, swept.ID).Scan(&left); err != nil {
			t.Fatal(err)
		}
		if left == 0 {
			break
		}
		if time.Since(revoked) > 15*time.Second {
			t.Fatal("the revoked key's collection is still there after 15 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if time.Since(revoked) < time.Second {
		t.Fatalf("swept %s after the revocation, inside the retention", time.Since(revoked))
	}
	if _, err := svc.Get(ctx, a.Root, kept.ID); err != nil {
		t.Fatalf("the live key's collection: %v", err)
	}
}
