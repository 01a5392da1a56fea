package webhook_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"

	"broll/billing"
	"broll/billing/billingtest"
	"broll/internal/config"
	"broll/internal/money"
	"broll/internal/outbox"
	"broll/webhook"
)

// A test key's purchase is delivered with livemode false and the test
// balance, and never raises balance.low, which is about the live pool; a
// live purchase of the same account still says livemode true.
func TestTestPurchaseEventsSayTestMode(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	rcv := newReceiver(t)
	if _, err := b.hooks.Create(ctx, b.owner(), webhookEndpoint(rcv.URL)); err != nil {
		t.Fatal(err)
	}
	bill := b.services(t, nil, func(c *config.Config) { c.TestBalance = 600 }).Billing
	// Both balances cross it with their purchase (1000.00 to 995.00, 6.00 to 1.00).
	threshold := money.Cents(99_800)
	if err := bill.SetAccountLowBalance(ctx, b.acct.ID, &threshold); err != nil {
		t.Fatal(err)
	}
	testKey := billingtest.Principal(b.acct, b.acct.TestKey(t, b.pool, "tester"))
	liveKey := billingtest.Principal(b.acct, b.acct.CustomerKey(t, b.pool, "buyer"))
	videos := billingtest.Videos(t, b.pool, 1, "easy")
	if _, err := bill.Purchase(ctx, testKey, billing.PurchaseRequest{VideoIDs: videos}); err != nil {
		t.Fatal(err)
	}
	if _, err := bill.Purchase(ctx, liveKey, billing.PurchaseRequest{VideoIDs: videos}); err != nil {
		t.Fatal(err)
	}
	b.drain(t, b.deliverer)

	got := byType(t, rcv.messages())
	if len(got[outbox.BalanceLow]) != 1 || !got[outbox.BalanceLow][0].Livemode {
		t.Fatalf("balance.low: %+v, want one, live", got[outbox.BalanceLow])
	}
	var modes []bool
	for _, e := range got[outbox.PurchaseCompleted] {
		var data struct {
			Key     struct{ ID uuid.UUID } `json:"key"`
			Balance float64                `json:"balance"`
		}
		if err := json.Unmarshal(e.Data, &data); err != nil {
			t.Fatal(err)
		}
		switch data.Key.ID {
		case testKey.KeyID:
			if e.Livemode || data.Balance != 1 {
				t.Errorf("test purchase.completed: livemode %v, balance %v (want false, 1)", e.Livemode, data.Balance)
			}
		case liveKey.KeyID:
			if !e.Livemode || data.Balance != 995 {
				t.Errorf("live purchase.completed: livemode %v, balance %v (want true, 995)", e.Livemode, data.Balance)
			}
		}
		modes = append(modes, e.Livemode)
	}
	if len(modes) != 2 || modes[0] == modes[1] {
		t.Fatalf("purchase.completed livemodes %v, want one of each", modes)
	}
	for _, e := range got[outbox.KeyCreated] {
		var data struct {
			Key struct{ ID uuid.UUID } `json:"key"`
		}
		if err := json.Unmarshal(e.Data, &data); err != nil {
			t.Fatal(err)
		}
		if e.Livemode != (data.Key.ID != testKey.KeyID) {
			t.Errorf("key.created of %s: livemode %v", data.Key.ID, e.Livemode)
		}
	}
	if len(got[outbox.KeyCreated]) != 2 {
		t.Errorf("%d key.created, want 2", len(got[outbox.KeyCreated]))
	}
}

func webhookEndpoint(url string) webhook.NewEndpoint {
	return webhook.NewEndpoint{URL: url, Events: outbox.Types}
}
