package api

import (
	"strings"
	"testing"

	"broll/billing/billingtest"
	"broll/clients/go/brollclient"
)

// TestMCPPurchaseIdempotencyKey: purchase_videos called again with the
// same idempotency_key, as a host repeats a call whose answer was lost,
// answers the first call's purchases as its own (same purchase ids, the
// same charge, the quoted expected_total still matching) and charges
// nothing more; another key, or none, gets the clips as already owned. A
// collection bought whole does the same. A key that is not 1 to 255
// printable ASCII characters is refused before anything runs.
func TestMCPPurchaseIdempotencyKey(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	base := e.serveLoopback(t)
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 5000})
	cust := acct.CustomerKey(t, e.pool, "alice")
	vids := billingtest.Videos(t, e.pool, 3, "medium")
	cs := mcpMustConnect(t, base, cust.Secret)
	ids := []string{vids[0].String(), vids[1].String()}

	buy := func(args map[string]any) (brollclient.PurchaseResult, string) {
		t.Helper()
		res, body := callTool(t, cs, "purchase_videos", args)
		if res.IsError {
			t.Fatalf("purchase_videos(%v): %s", args, body.raw)
		}
		return decode[brollclient.PurchaseResult](t, body), resultText(res, 0)
	}
	args := map[string]any{"video_ids": ids, "expected_total": 20, "idempotency_key": "order-7f3a"}
	first, _ := buy(args)
	if first.TotalCharged != 20 || first.Balance != 30 || len(first.Purchases) != 2 {
		t.Fatalf("first call: %+v", first)
	}
	again, summary := buy(args)
	if again.TotalCharged != 20 || again.Balance != 30 || len(again.Purchases) != 2 ||
		!strings.Contains(summary, "Bought 2 clips for 20.00 USD") {
		t.Fatalf("the same call again: %+v (%q)", again, summary)
	}
	for i, l := range again.Purchases {
		was := first.Purchases[i]
		if l.AlreadyOwned || l.PurchaseId == nil || *l.PurchaseId != *was.PurchaseId || l.PricePaid != was.PricePaid ||
			l.License == nil || l.License.Id != was.License.Id {
			t.Fatalf("line %d again: %+v, first %+v", i, l, was)
		}
	}

	// Another key, or none: the clips are owned, nothing is charged, and
	// the quoted total no longer holds.
	other, _ := buy(map[string]any{"video_ids": ids, "idempotency_key": "order-other"})
	if other.TotalCharged != 0 || !other.Purchases[0].AlreadyOwned || !other.Purchases[1].AlreadyOwned {
		t.Fatalf("another key: %+v", other)
	}
	callToolErr(t, cs, "purchase_videos", map[string]any{"video_ids": ids, "expected_total": 20}, "price_changed")

	// A collection bought whole under a key, then again.
	col := decode[brollclient.Collection](t, callToolOK(t, cs, "create_collection", map[string]any{"name": "Harbour"})).Id.String()
	callToolOK(t, cs, "add_to_collection", map[string]any{"collection_id": col, "video_ids": []string{vids[0].String(), vids[2].String()}})
	colArgs := map[string]any{"collection_id": col, "expected_total": 10, "idempotency_key": "collection-1"}
	c1, _ := buy(colArgs)
	c2, _ := buy(colArgs)
	if c1.TotalCharged != 10 || c2.TotalCharged != 10 || c2.Balance != 20 || len(c2.Purchases) != 1 ||
		c2.Purchases[0].AlreadyOwned || *c2.Purchases[0].PurchaseId != *c1.Purchases[0].PurchaseId {
		t.Fatalf("collection: first %+v, again %+v", c1, c2)
	}

	for _, key := range []any{"tab\there", strings.Repeat("k", 256), "naïve", "a\x00b", "\xed\xa0\x80", 123, true, []string{"a"}} {
		out := callToolErr(t, cs, "purchase_videos", map[string]any{"video_ids": []string{vids[2].String()}, "idempotency_key": key},
			"invalid_request")
		if deref(out.Field) != "idempotency_key" {
			t.Errorf("key %#v: field %v", key, out.Field)
		}
	}
	if bal := decode[brollclient.Balance](t, callToolOK(t, cs, "get_balance", nil)); bal.Balance != 20 || bal.MonthToDate.Purchases != 3 {
		t.Fatalf("balance: %+v", bal)
	}
}
