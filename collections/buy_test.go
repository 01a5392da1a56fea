package collections_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"broll/billing/billingtest"
	"broll/collections"
)

// TestBuyAFullCollection: a collection at the cap, 5,000 clips, quoted
// and bought whole in one purchase through billing's statement; buying
// it again charges nothing and skips every clip as already owned.
func TestBuyAFullCollection(t *testing.T) {
	t.Parallel()
	svc, pool := newService(t)
	ctx := context.Background()
	a := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: 5_000 * 500})
	p := billingtest.Principal(a, a.CustomerKey(t, pool, "bulk"))
	v := billingtest.Videos(t, pool, collections.MaxItemsPerCollection, "easy")
	c, err := svc.Create(ctx, p, collections.CreateRequest{Name: "everything"})
	if err != nil {
		t.Fatal(err)
	}
	for rest := v; len(rest) > 0; {
		n := min(len(rest), collections.MaxItemsPerAdd)
		if _, err := svc.AddItems(ctx, p, c.ID, rest[:n]); err != nil {
			t.Fatal(err)
		}
		rest = rest[n:]
	}
	quote, err := svc.Buy(ctx, p, collections.BuyRequest{CollectionID: c.ID, DryRun: true})
	if err != nil || quote.TotalCharged != 5_000*500 || len(quote.Purchases) != 5_000 {
		t.Fatalf("quote: %v for %d clips: %v", quote.TotalCharged, len(quote.Purchases), err)
	}
	res, err := svc.Buy(ctx, p, collections.BuyRequest{CollectionID: c.ID, ExpectedTotal: &quote.TotalCharged})
	if err != nil || res.TotalCharged != 5_000*500 || res.Balance != 0 || len(res.Skipped) != 0 {
		t.Fatalf("bought %v, balance %v, skipped %d: %v", res.TotalCharged, res.Balance, len(res.Skipped), err)
	}
	seen := map[uuid.UUID]bool{}
	for _, l := range res.Purchases {
		seen[l.VideoID] = true
	}
	if len(seen) != 5_000 {
		t.Fatalf("%d distinct clips bought", len(seen))
	}
	again, err := svc.Buy(ctx, p, collections.BuyRequest{CollectionID: c.ID})
	if err != nil || again.TotalCharged != 0 || len(again.Purchases) != 0 || len(again.Skipped) != 5_000 || again.Skipped[0].Reason != collections.SkipAlreadyOwned {
		t.Fatalf("again: %v for %d, %d skipped: %v", again.TotalCharged, len(again.Purchases), len(again.Skipped), err)
	}
}
