package api

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"broll/billing"
	"broll/billing/billingtest"
)

// TestPurchaseEndsTheRequestsTrust: a request's admission lets its node
// answer reads of what its key owns from the node's copies; a purchase by
// the key ends that for the rest of the request, whichever way it was made
// (here the billing service itself, with no word to the edge), so a read
// after it in the same request (an MCP batch's next call) shows the clip
// owned.
func TestPurchaseEndsTheRequestsTrust(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	ctx := context.Background()
	g := e.nodes[0].g
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 10000})
	buyer := acct.CustomerKey(t, e.pool, "buyer")
	id := billingtest.Videos(t, e.pool, 1, "easy")[0]
	p, err := g.Auth.Authenticate(ctx, buyer.Secret, false)
	if err != nil {
		t.Fatal(err)
	}
	d, err := g.Gate.Admit(ctx, p.Caller())
	if err != nil || !d.Allowed {
		t.Fatalf("admission: %+v %v", d, err)
	}
	if _, bought, err := g.Catalog.VideoForKey(ctx, id, p.KeyID, d.Pass); err != nil || bought.Valid {
		t.Fatalf("before the purchase: bought %v, %v", bought, err)
	}
	if _, err := g.Billing.Purchase(ctx, p, billing.PurchaseRequest{VideoIDs: []uuid.UUID{id}}); err != nil {
		t.Fatal(err)
	}
	if _, bought, err := g.Catalog.VideoForKey(ctx, id, p.KeyID, d.Pass); err != nil || !bought.Valid {
		t.Fatalf("the same request's read after its purchase: bought %v, %v; want the purchase", bought, err)
	}
}
