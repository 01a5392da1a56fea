package api

import (
	"net/url"
	"testing"

	"github.com/google/uuid"

	"broll/billing/billingtest"
	"broll/clients/go/brollclient"
)

// TestPurchasesCursor: over REST and MCP, next_cursor walks the purchase
// list once each; a cursor of another query, an edited one, or one with page
// is 400 invalid_request, never a 500.
func TestPurchasesCursor(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	base := e.serveLoopback(t)
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 100000})
	vids := billingtest.Videos(t, e.pool, 5, "easy")
	root := acct.RootKey.Secret
	e.buy(t, 0, root, vids...)

	seen := map[uuid.UUID]bool{}
	path := "/api/v1/broll/purchases?limit=2"
	var first string
	for pages := 0; pages < 10; pages++ {
		r := e.do(t, 0, "GET", path, root, nil)
		if r.status != 200 {
			t.Fatalf("%s: %d %s", path, r.status, r.raw)
		}
		p := decode[brollclient.PurchaseList](t, r)
		if p.Pagination.Offset != len(seen) {
			t.Errorf("offset %d after %d rows", p.Pagination.Offset, len(seen))
		}
		for _, row := range p.Purchases {
			if seen[row.PurchaseId] {
				t.Fatalf("purchase %s listed twice", row.PurchaseId)
			}
			seen[row.PurchaseId] = true
		}
		if p.Pagination.NextCursor == nil {
			if p.Pagination.HasMore {
				t.Fatal("has_more on the last page")
			}
			break
		}
		if first == "" {
			first = *p.Pagination.NextCursor
		}
		path = "/api/v1/broll/purchases?limit=2&cursor=" + url.QueryEscape(*p.Pagination.NextCursor)
	}
	if len(seen) != len(vids) {
		t.Fatalf("walked %d purchases, want %d", len(seen), len(vids))
	}

	for name, q := range map[string]string{
		"another query's": "emotion=happy&cursor=" + url.QueryEscape(first),
		"edited":          "cursor=" + url.QueryEscape(first[:len(first)-2]+"xx"),
		"with page":       "page=2&cursor=" + url.QueryEscape(first),
		"with offset":     "offset=2&cursor=" + url.QueryEscape(first),
	} {
		r := e.do(t, 0, "GET", "/api/v1/broll/purchases?"+q, root, nil)
		if r.status != 400 || problemOf(t, r).Code != "invalid_request" {
			t.Errorf("%s: %d %s, want 400 invalid_request", name, r.status, r.raw)
		}
	}

	cs := mcpMustConnect(t, base, root)
	p := decode[brollclient.PurchaseList](t, callToolOK(t, cs, "list_purchases", map[string]any{"limit": 2, "cursor": first}))
	if len(p.Purchases) != 2 || p.Pagination.Offset != 2 || p.Pagination.NextCursor == nil {
		t.Fatalf("list_purchases after a cursor: %+v", p)
	}
	callToolErr(t, cs, "list_purchases", map[string]any{"emotion": "happy", "cursor": first}, "invalid_request")
}
