package api

import (
	"context"
	"slices"
	"testing"

	"broll/billing/billingtest"
	"broll/clients/go/brollclient"
)

// TestIdempotentRetryAfterLostAnswer: a purchase whose answer was not kept
// (a 5xx such as "could not be confirmed", or a client that left: the
// claim is released, which the test does by deleting its row) and that is
// sent again with its Idempotency-Key gets the first run's answer: the same
// purchases, charged, not already owned; the pool charged once, and the
// first run's expected_total still accepted. The same holds for a
// collection, whose clips are not skipped as already owned. Under another
// Idempotency-Key the clips are already owned, as before.
func TestIdempotentRetryAfterLostAnswer(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{nodes: 2, perMinute: 1_000_000})
	ctx := context.Background()
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 10_000})
	customer := acct.CustomerKey(t, e.pool, "buyer")
	clips := billingtest.Videos(t, e.pool, 4, "easy") // 5.00 each
	send := func(n int, idem string, body any) brollclient.PurchaseResult {
		t.Helper()
		r := e.send(t, n, "POST", "/api/v1/broll/purchase",
			map[string]string{"Authorization": "Bearer " + customer.Secret, "Idempotency-Key": idem}, body)
		if r.header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("%s: replayed from a kept answer, want a run", idem)
		}
		return expect[brollclient.PurchaseResult](t, r, 200)
	}
	lose := func(idem string) {
		t.Helper()
		tag, err := e.pool.Exec(ctx, `DELETE FROM idempotency_keys WHERE api_key_id = $1 AND idem_key = $2`,
			customer.ID, idem)
		if err != nil || tag.RowsAffected() != 1 {
			t.Fatalf("release %s: %v rows, %v", idem, tag.RowsAffected(), err)
		}
	}
	same := func(what string, got, first brollclient.PurchaseResult) {
		t.Helper()
		if got.TotalCharged != first.TotalCharged || got.Balance != first.Balance || len(got.Purchases) != len(first.Purchases) {
			t.Fatalf("%s: charged %v (balance %v, %d lines), first run %v (balance %v, %d lines)", what,
				got.TotalCharged, got.Balance, len(got.Purchases), first.TotalCharged, first.Balance, len(first.Purchases))
		}
		for i, p := range got.Purchases {
			f := first.Purchases[i]
			if p.AlreadyOwned || p.PurchaseId == nil || deref(p.PurchaseId) != deref(f.PurchaseId) || p.PricePaid != f.PricePaid || p.VideoId != f.VideoId {
				t.Errorf("%s line %d: %+v, first run %+v", what, i, p, f)
			}
		}
	}

	body := map[string]any{"video_ids": clips[:2], "expected_total": 10}
	first := send(0, "order-1", body)
	if first.TotalCharged != 10 || first.Balance != 90 {
		t.Fatalf("first run: charged %v, balance %v", first.TotalCharged, first.Balance)
	}
	lose("order-1")
	same("run again", send(1, "order-1", body), first)
	if other := send(0, "order-2", map[string]any{"video_ids": clips[:2]}); other.TotalCharged != 0 ||
		!other.Purchases[0].AlreadyOwned || !other.Purchases[1].AlreadyOwned {
		t.Fatalf("another Idempotency-Key: charged %v, lines %+v", other.TotalCharged, other.Purchases)
	}

	c := e.newCollection(t, customer.Secret, "retried", clips[1:]...)
	buy := map[string]any{"collection_id": c.Id, "expected_total": 10}
	firstBuy := send(0, "collection-1", buy)
	if firstBuy.TotalCharged != 10 || firstBuy.Balance != 80 || len(deref(firstBuy.Skipped)) != 1 {
		t.Fatalf("collection's first run: charged %v, balance %v, skipped %v", firstBuy.TotalCharged, firstBuy.Balance, deref(firstBuy.Skipped))
	}
	lose("collection-1")
	againBuy := send(1, "collection-1", buy)
	same("collection run again", againBuy, firstBuy)
	if !slices.Equal(deref(againBuy.Skipped), deref(firstBuy.Skipped)) {
		t.Fatalf("collection run again skipped %v, first run %v", deref(againBuy.Skipped), deref(firstBuy.Skipped))
	}
	if other := send(0, "collection-2", map[string]any{"collection_id": c.Id}); other.TotalCharged != 0 || len(deref(other.Skipped)) != 3 {
		t.Fatalf("collection under another Idempotency-Key: charged %v, skipped %v", other.TotalCharged, deref(other.Skipped))
	}
	var balance int64
	if err := e.pool.QueryRow(ctx, `SELECT balance_cents FROM accounts WHERE id = $1`, acct.ID).Scan(&balance); err != nil || balance != 8000 {
		t.Fatalf("balance %d (%v), want 80.00: four clips charged once each", balance, err)
	}
}
