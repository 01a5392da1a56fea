package billing_test

import (
	"testing"
	"time"

	"broll/billing"
	"broll/billing/billingtest"
	"broll/internal/apperr"
	"broll/internal/money"
)

// TestRetryKeyAnswersTheFirstRun: a purchase run again under the same
// Idempotency-Key (an answer the client never got) answers the clips the
// first run bought as bought, with the same purchase ids and charge, the
// pool charged once; even with the first run's expected_total, which the
// clips now owned no longer cost. Under another Idempotency-Key, or none,
// they are already owned. Two keys using one Idempotency-Key for one clip
// make two purchases.
func TestRetryKeyAnswersTheFirstRun(t *testing.T) {
	t.Parallel()
	pool, ctx, svc := setup(t)
	acct := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: 10000})
	alice := billingtest.Principal(acct, acct.CustomerKey(t, pool, "alice"))
	bob := billingtest.Principal(acct, acct.CustomerKey(t, pool, "bob"))
	clips := billingtest.Videos(t, pool, 2, "easy")

	total := money.Cents(1000)
	req := billing.PurchaseRequest{VideoIDs: clips, ExpectedTotal: &total, RetryKey: "order-7"}
	first, err := svc.Purchase(ctx, alice, req)
	if err != nil || first.TotalCharged != 1000 || first.Balance != 9000 {
		t.Fatalf("first run: %+v %v", first, err)
	}
	again, err := svc.Purchase(ctx, alice, req)
	if err != nil || again.TotalCharged != 1000 || again.Balance != 9000 || len(again.Purchases) != 2 {
		t.Fatalf("run again: %+v %v", again, err)
	}
	for i, pv := range again.Purchases {
		f := first.Purchases[i]
		if pv.AlreadyOwned || pv.PurchaseID != f.PurchaseID || pv.PricePaid != f.PricePaid || pv.LicenseID != f.LicenseID ||
			!pv.PurchasedAt.Equal(f.PurchasedAt) || pv.Download.URL == "" {
			t.Errorf("line %d run again: %+v, first %+v", i, pv, f)
		}
	}
	for _, other := range []string{"order-8", ""} {
		r, err := svc.Purchase(ctx, alice, billing.PurchaseRequest{VideoIDs: clips, RetryKey: other})
		if err != nil || r.TotalCharged != 0 || !r.Purchases[0].AlreadyOwned || !r.Purchases[1].AlreadyOwned {
			t.Errorf("retry key %q: %+v %v", other, r, err)
		}
	}
	r, err := svc.Purchase(ctx, bob, billing.PurchaseRequest{VideoIDs: clips[:1], RetryKey: "order-7"})
	if err != nil || r.TotalCharged != 500 || r.Purchases[0].AlreadyOwned || r.Purchases[0].PurchaseID == first.Purchases[0].PurchaseID {
		t.Fatalf("another key, same Idempotency-Key: %+v %v", r, err)
	}
	if got := checkInvariants(t, pool, acct.ID); got != 8500 {
		t.Fatalf("balance %v, want 85.00 (three clips charged once each)", got)
	}
	// Past the key's life the same Idempotency-Key is a new request: the
	// clips are already owned, and its expected_total is held against 0.
	if _, err := pool.Exec(ctx, `UPDATE purchases SET purchased_at = purchased_at - interval '24 hours' WHERE api_key_id = $1`,
		alice.KeyID); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Purchase(ctx, alice, req); code(err) != apperr.PriceChanged {
		t.Fatalf("same Idempotency-Key after its life, with expected_total: %v", err)
	}
	late, err := svc.Purchase(ctx, alice, billing.PurchaseRequest{VideoIDs: clips, RetryKey: "order-7"})
	if err != nil || late.TotalCharged != 0 || !late.Purchases[0].AlreadyOwned || !late.Purchases[1].AlreadyOwned {
		t.Fatalf("same Idempotency-Key after its life: %+v %v", late, err)
	}
	id, at := first.Purchases[0].PurchaseID, first.Purchases[0].PurchasedAt
	if !billing.BoughtByRetry(alice.KeyID, "order-7", clips[0], id, at, at.Add(billing.RetryWindow-time.Second)) ||
		billing.BoughtByRetry(alice.KeyID, "order-7", clips[0], id, at, at.Add(billing.RetryWindow)) ||
		billing.BoughtByRetry(alice.KeyID, "", clips[0], id, at, at) ||
		billing.BoughtByRetry(bob.KeyID, "order-7", clips[0], id, at, at) {
		t.Fatal("BoughtByRetry: only this key's id under this Idempotency-Key, within RetryWindow")
	}
	if billing.RetryPurchaseID(alice.KeyID, "order-7", clips[0]) != first.Purchases[0].PurchaseID ||
		billing.RetryPurchaseID(alice.KeyID, "order-7", clips[1]) == first.Purchases[0].PurchaseID ||
		billing.RetryPurchaseID(alice.KeyID, "order-7", clips[0]) == billing.RetryPurchaseID(bob.KeyID, "order-7", clips[0]) ||
		billing.RetryPurchaseID(alice.KeyID, "order-7", clips[0]) == billing.RetryPurchaseID(alice.KeyID, "order-70", clips[0]) {
		t.Fatal("purchase ids are not one per key, Idempotency-Key and clip")
	}
}
