package webhook_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"broll/billing"
	"broll/billing/billingtest"
	"broll/catalog"
	"broll/internal/apperr"
	"broll/internal/config"
	"broll/internal/money"
	"broll/internal/outbox"
	"broll/internal/testkit"
	"broll/tenancy"
	"broll/webhook"
)

func verifyWithGo(t *testing.T, secret string, msgs []message) {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if err := wh.Verify(m.Body, m.Header); err != nil {
			t.Fatalf("Standard Webhooks (Go) refused %s %s: %v", m.Header.Get("webhook-id"), m.Body, err)
		}
	}
}

func byType(t *testing.T, msgs []message) map[string][]event {
	out := map[string][]event{}
	for _, m := range msgs {
		e := m.event(t)
		if m.Header.Get("webhook-id") != e.ID || !strings.HasPrefix(e.ID, "evt_") {
			t.Fatalf("webhook-id %q, body id %q", m.Header.Get("webhook-id"), e.ID)
		}
		out[e.Type] = append(out[e.Type], e)
	}
	return out
}

// Every event type is written by the change it reports, delivered by the
// worker's deliverer, and verifies with the Standard Webhooks libraries of
// Go and of npm; after a rotation, with the old and with the new secret.
func TestEveryEventTypeArrivesSigned(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	rcv := newReceiver(t)
	ep, err := b.hooks.Create(ctx, b.owner(), webhook.NewEndpoint{URL: rcv.URL, Events: outbox.Types})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ep.Secret, "whsec_") {
		t.Fatalf("secret %q", ep.Secret)
	}
	rds := testkit.Redis(t)
	g := b.services(t, rds.Client, func(c *config.Config) { c.RedisPrefix = rds.Prefix })
	bill := g.Billing
	threshold := money.Cents(99_999)
	if err := bill.SetAccountLowBalance(ctx, b.acct.ID, &threshold); err != nil {
		t.Fatal(err)
	}
	tenants := g.Tenancy
	key, err := tenants.CreateCustomerKey(ctx, b.acct.Root, "customer one", nil)
	if err != nil {
		t.Fatal(err)
	}
	videos := billingtest.Videos(t, b.pool, 2, "easy")
	buyer := billingtest.Principal(b.acct, key)
	for _, v := range videos { // two purchases below the threshold: one balance.low
		if _, err := bill.Purchase(ctx, buyer, billing.PurchaseRequest{VideoIDs: []uuid.UUID{v}}); err != nil {
			t.Fatal(err)
		}
	}
	// A key whose monthly limit is below any price: both purchases are
	// refused, and the period's one spend_limit.reached is sent once.
	limited, err := tenants.CreateCustomerKeyWith(ctx, b.acct.Root, tenancy.CustomerKeySpec{
		Label: "limited", SpendLimit: &tenancy.SpendLimit{Amount: 1, Period: tenancy.SpendMonth}})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range videos {
		_, err := bill.Purchase(ctx, billingtest.Principal(b.acct, limited), billing.PurchaseRequest{VideoIDs: []uuid.UUID{v}})
		if apperr.CodeOf(err) != apperr.SpendLimitExceeded {
			t.Fatalf("purchase over the limit: %v", err)
		}
	}
	keyChanges := g.KeyChanges
	if _, err := keyChanges.Revoke(ctx, tenancy.CustomerKeysOf(b.acct.Root), key.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := keyChanges.Revoke(ctx, tenancy.CustomerKeysOf(b.acct.Root), key.ID); err != nil { // again: no second event
		t.Fatal(err)
	}
	err = g.Catalog.StoreEmbeddings(ctx, "test-model",
		[]catalog.Embedding{{ID: videos[0], Vector: make([]float32, 768)}})
	if err != nil {
		t.Fatal(err)
	}
	b.drain(t, b.deliverer)

	msgs := rcv.messages()
	got := byType(t, msgs)
	want := map[string]int{outbox.KeyCreated: 2, outbox.PurchaseCompleted: 2, outbox.BalanceLow: 1,
		outbox.KeyRevoked: 1, outbox.ClipsEmbedded: 1, outbox.SpendLimitReached: 1}
	for _, typ := range outbox.Types {
		if len(got[typ]) != want[typ] {
			t.Errorf("%s: got %d events, want %d", typ, len(got[typ]), want[typ])
		}
	}
	if len(msgs) != 8 {
		t.Errorf("got %d messages, want 8", len(msgs))
	}
	if l := got[outbox.SpendLimitReached]; len(l) > 0 && !strings.Contains(string(l[0].Data), limited.ID.String()) {
		t.Errorf("spend_limit.reached names another key: %s", l[0].Data)
	}
	if p := got[outbox.PurchaseCompleted]; len(p) > 0 && !strings.Contains(string(p[0].Data), key.ID.String()) {
		t.Errorf("purchase.completed names no key: %s", p[0].Data)
	}
	verifyWithGo(t, ep.Secret, msgs)
	verifyWithNode(t, []string{ep.Secret}, msgs)

	t.Run("after a rotation both secrets verify", func(t *testing.T) {
		rot, err := b.hooks.Rotate(ctx, b.owner(), ep.ID, time.Hour)
		if err != nil || rot.ActiveSecrets != 2 || rot.Secret == ep.Secret {
			t.Fatalf("rotate: %+v %v", rot, err)
		}
		if _, err := tenants.CreateCustomerKey(ctx, b.acct.Root, "customer two", nil); err != nil {
			t.Fatal(err)
		}
		b.drain(t, b.deliverer)
		after := rcv.messages()[len(msgs):]
		if len(after) != 1 {
			t.Fatalf("got %d messages after the rotation, want 1", len(after))
		}
		if sigs := strings.Fields(after[0].Header.Get("webhook-signature")); len(sigs) != 2 {
			t.Fatalf("signature header %q: want one signature per active secret", sigs)
		}
		verifyWithGo(t, ep.Secret, after)
		verifyWithGo(t, rot.Secret, after)
		verifyWithNode(t, []string{ep.Secret, rot.Secret}, after)
	})
}

// A purchase whose transaction rolls back leaves no event: here the outbox
// insert itself fails, and the purchase goes with it.
func TestRolledBackPurchaseSendsNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	rcv := newReceiver(t)
	if _, err := b.hooks.Create(ctx, b.owner(), webhook.NewEndpoint{URL: rcv.URL, Events: outbox.Types}); err != nil {
		t.Fatal(err)
	}
	// A constraint only this account's purchase events break: the
	// transaction fails after the purchase statement has run.
	if _, err := b.pool.Exec(ctx, `ALTER TABLE webhook_events ADD CONSTRAINT refuse_test_purchase
		CHECK (NOT (type = 'purchase.completed' AND account_id = '`+b.acct.ID.String()+`'))`); err != nil {
		t.Fatal(err)
	}
	bill := b.services(t, nil, nil).Billing
	video := billingtest.Videos(t, b.pool, 1, "easy")
	_, err := bill.Purchase(ctx, b.acct.Root, billing.PurchaseRequest{VideoIDs: video})
	if err == nil {
		t.Fatal("purchase succeeded although its transaction could not commit")
	}
	var purchases, events int
	if err := b.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM purchases WHERE account_id = $1),
		(SELECT count(*) FROM webhook_events WHERE account_id = $1 AND type <> 'key.created')`, b.acct.ID).Scan(&purchases, &events); err != nil {
		t.Fatal(err)
	}
	if purchases != 0 || events != 0 {
		t.Fatalf("after the rollback: %d purchases, %d events; want none", purchases, events)
	}
	b.drain(t, b.deliverer)
	for _, m := range rcv.messages() {
		if e := m.event(t); slices.Contains([]string{outbox.PurchaseCompleted, outbox.BalanceLow}, e.Type) {
			t.Fatalf("received %s for a purchase that rolled back", e.Type)
		}
	}
}
