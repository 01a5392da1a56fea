package billing_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"broll/billing"
	"broll/billing/billingtest"
	"broll/embed"
	"broll/internal/apperr"
	"broll/internal/paging"
	"broll/tenancy"
)

// fixedEmbedder is the built-in embedder seen as a query embedder.
type fixedEmbedder struct{ e *embed.Builtin }

func (f fixedEmbedder) Model() string           { return f.e.Model() }
func (f fixedEmbedder) RelevanceFloor() float64 { return f.e.RelevanceFloor() }
func (f fixedEmbedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	v, err := f.e.Embed(ctx, embed.Query, []string{text})
	if err != nil {
		return nil, err
	}
	return v[0], nil
}

func TestListPurchasesVisibilityAndSummary(t *testing.T) {
	t.Parallel()
	pool, ctx, svc := setup(t)
	acct := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: 100000})
	other := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: 100000})
	aliceKey := acct.CustomerKey(t, pool, "alice")
	alice := billingtest.Principal(acct, aliceKey)
	bob := billingtest.Principal(acct, acct.CustomerKey(t, pool, "bob"))
	mallory := billingtest.Principal(other, other.CustomerKey(t, pool, "mallory"))
	vids := billingtest.Videos(t, pool, 5, "easy")

	buy := func(p tenancy.Principal, ids ...uuid.UUID) {
		t.Helper()
		mustBuy(ctx, t, svc, p, ids)
	}
	buy(alice, vids[0], vids[1], vids[2])
	buy(bob, vids[0])
	buy(acct.Root, vids[4])
	buy(mallory, vids[3])
	// A legacy purchase of the account, as v0 records it.
	if _, err := pool.Exec(ctx, `INSERT INTO purchases (account_id, video_id, price_cents, tier, legacy, source, customer_email)
		VALUES ($1, $2, 500, 'easy', true, $3, 'old@customer.test')`, acct.ID, vids[3], acct.Source); err != nil {
		t.Fatal(err)
	}

	list := func(p tenancy.Principal, lp billing.ListParams) (billing.Listing, error) {
		q, err := lp.Parse(p)
		if err != nil {
			return billing.Listing{}, err
		}
		return svc.ListPurchases(ctx, p, q, nil)
	}
	cases := []struct {
		name  string
		p     tenancy.Principal
		lp    billing.ListParams
		count int
		cents int64
	}{
		{"customer sees its own", alice, billing.ListParams{}, 3, 1500},
		{"other customer sees its own", bob, billing.ListParams{}, 1, 500},
		{"root sees customers, itself and legacy", acct.Root, billing.ListParams{}, 6, 3000},
		{"root filters by key", acct.Root, billing.ListParams{APIKeyID: aliceKey.ID.String()}, 3, 1500},
		{"another account sees nothing of it", mallory, billing.ListParams{}, 1, 500},
		{"summary covers all pages", acct.Root, billing.ListParams{Page: paging.Request{Limit: 2}}, 6, 3000},
	}
	for _, tc := range cases {
		l, err := list(tc.p, tc.lp)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if l.Total != tc.count || int64(l.Amount) != tc.cents {
			t.Errorf("%s: %d purchases for %d cents, want %d for %d", tc.name, l.Total, l.Amount, tc.count, tc.cents)
		}
	}
	l, _ := list(acct.Root, billing.ListParams{Page: paging.Request{Limit: 2, Offset: 4}})
	if len(l.Purchases) != 2 || l.Query.Offset != 4 {
		t.Fatalf("page 3: %d rows offset %d", len(l.Purchases), l.Query.Offset)
	}
	legacy := 0
	for _, p := range append(l.Purchases, mustList(t, list, acct.Root).Purchases...) {
		if p.Legacy && p.CustomerEmail != nil && *p.CustomerEmail == "old@customer.test" {
			legacy++
		}
	}
	if legacy == 0 {
		t.Fatal("legacy purchase not visible to the root key")
	}

	// Refusals.
	if _, err := list(alice, billing.ListParams{APIKeyID: aliceKey.ID.String()}); apperr.CodeOf(err) != apperr.Forbidden {
		t.Errorf("customer using api_key_id: %v", err)
	}
	if _, err := list(acct.Root, billing.ListParams{APIKeyID: mallory.KeyID.String()}); apperr.CodeOf(err) != apperr.NotFound {
		t.Errorf("foreign api_key_id: %v", err)
	}
	for _, lp := range []billing.ListParams{
		{StartDate: "2026-13-01"}, {EndDate: "yesterday"}, {StartDate: "2026-05-02", EndDate: "2026-05-01"},
		{Page: paging.Request{Limit: -1}}, {Page: paging.Request{Offset: -1}}, {Emotion: "meh"}, {APIKeyID: "nope"},
	} {
		if _, err := list(acct.Root, lp); apperr.CodeOf(err) != apperr.Invalid {
			t.Errorf("%+v: %v", lp, err)
		}
	}
	if _, err := list(acct.Root, billing.ListParams{Search: "a", SemanticSearch: "b"}); apperr.CodeOf(err) != apperr.ConflictingSearch {
		t.Errorf("both searches: %v", err)
	}
}

func mustList(t *testing.T, list func(tenancy.Principal, billing.ListParams) (billing.Listing, error), p tenancy.Principal) billing.Listing {
	t.Helper()
	l, err := list(p, billing.ListParams{})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestListPurchasesDateEdges: the range is inclusive, whole UTC days.
func TestListPurchasesDateEdges(t *testing.T) {
	t.Parallel()
	pool, ctx, svc := setup(t)
	acct := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: 100000})
	key := billingtest.Principal(acct, acct.CustomerKey(t, pool, "k"))
	vids := billingtest.Videos(t, pool, 4, "easy")
	times := []string{"2026-04-30T23:59:59.999Z", "2026-05-01T00:00:00Z", "2026-05-31T23:59:59.999Z", "2026-06-01T00:00:00Z"}
	for i, v := range vids {
		r, err := svc.Purchase(ctx, key, billing.PurchaseRequest{VideoIDs: []uuid.UUID{v}})
		if err != nil {
			t.Fatal(err)
		}
		ts, _ := time.Parse(time.RFC3339, times[i])
		if _, err := pool.Exec(ctx, `UPDATE purchases SET purchased_at = $2 WHERE id = $1`, r.Purchases[0].PurchaseID, ts); err != nil {
			t.Fatal(err)
		}
	}
	q, err := billing.ListParams{StartDate: "2026-05-01", EndDate: "2026-05-31"}.Parse(key)
	if err != nil {
		t.Fatal(err)
	}
	l, err := svc.ListPurchases(ctx, key, q, nil)
	if err != nil || l.Total != 2 || l.Amount != 1000 {
		t.Fatalf("May: %d purchases %d cents, %v", l.Total, l.Amount, err)
	}
	q, _ = billing.ListParams{StartDate: "2026-05-01", EndDate: "2026-05-01"}.Parse(key)
	if l, _ := svc.ListPurchases(ctx, key, q, nil); l.Total != 1 {
		t.Fatalf("single day: %d", l.Total)
	}
}

func TestListPurchasesSearch(t *testing.T) {
	t.Parallel()
	pool, ctx, svc := setup(t)
	acct := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: 100000})
	key := billingtest.Principal(acct, acct.CustomerKey(t, pool, "k"))
	builtin := embed.NewBuiltin()
	vids := embeddedClips(t, pool, builtin, "Young woman laughing at her phone on the couch", "Man driving at night, excited",
		"Chef chopping onions in a kitchen")
	unembedded := billingtest.Videos(t, pool, 1, "easy")
	mustBuy(ctx, t, svc, key, append(unembedded, vids...))
	run := func(lp billing.ListParams) billing.Listing {
		t.Helper()
		q, err := lp.Parse(key)
		if err != nil {
			t.Fatal(err)
		}
		l, err := svc.ListPurchases(ctx, key, q, fixedEmbedder{builtin})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	if l := run(billing.ListParams{Search: "kitchen"}); l.Total != 1 || l.Purchases[0].VideoID != vids[2] {
		t.Fatalf("keyword: %+v", l.Purchases)
	}
	if l := run(billing.ListParams{Search: "laug"}); l.Total != 1 || l.Purchases[0].VideoID != vids[0] {
		t.Fatalf("prefix: %+v", l.Purchases)
	}
	if l := run(billing.ListParams{Search: "submarine"}); l.Total != 0 {
		t.Fatalf("miss: %+v", l.Purchases)
	}
	// By meaning: ranked, and cut at the model's floor, so the summary
	// counts what the list shows.
	l := run(billing.ListParams{SemanticSearch: "lady cracking up while scrolling on the sofa"})
	if l.Total != 1 || len(l.Purchases) != 1 || l.Purchases[0].VideoID != vids[0] || l.Purchases[0].Similarity == nil ||
		*l.Purchases[0].Similarity < builtin.RelevanceFloor() || int64(l.Amount) != 500 {
		t.Fatalf("semantic: total %d amount %d %+v", l.Total, l.Amount, l.Purchases)
	}
	if l := run(billing.ListParams{SemanticSearch: "submarine under the ice"}); l.Total != 0 || len(l.Purchases) != 0 {
		t.Fatalf("semantic miss lists %d purchases", l.Total)
	}
	if l := run(billing.ListParams{SemanticSearch: "kitchen cooking", Emotion: " HAPPY "}); l.Total != 1 || l.Purchases[0].VideoID != vids[2] {
		t.Fatalf("semantic with emotion: %+v", l.Purchases)
	}
	// A clip not embedded yet is bought and counted like any other when no
	// semantic_search is given.
	if l := run(billing.ListParams{}); l.Total != 4 || int64(l.Amount) != 2000 {
		t.Fatalf("without semantic_search: %d purchases, %d cents, want 4 and 2000", l.Total, l.Amount)
	}
}
