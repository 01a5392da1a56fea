package api

import (
	"context"
	"testing"

	"broll/billing/billingtest"
	"broll/clients/go/brollclient"
)

// A platform reads its licences' current status in bulk from its purchase
// records, and license_status narrows them to the revoked (or the active)
// ones, over REST and MCP alike, with a cursor that keeps the filter.
func TestPurchasesByLicenseStatus(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	base := e.serveLoopback(t)
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 100_000})
	root := acct.RootKey.Secret
	lines := e.buy(t, 0, root, billingtest.Videos(t, e.pool, 3, "easy")...).Purchases
	revoked := map[string]bool{licenseOf(t, lines[0]).Id: true, licenseOf(t, lines[2]).Id: true}
	for id := range revoked {
		if _, err := e.ctl.Licenses.Revoke(context.Background(), id, "charged back"); err != nil {
			t.Fatal(err)
		}
	}
	list := func(query string) []brollclient.PurchaseRecord {
		t.Helper()
		return expect[brollclient.PurchaseList](t, e.do(t, 0, "GET", "/api/v1/broll/purchases"+query, root, nil), 200).Purchases
	}
	for _, r := range list("") {
		if r.License == nil || (r.License.Status == "revoked") != revoked[r.License.Id] {
			t.Errorf("unfiltered record: %+v", r.License)
		}
	}
	for status, want := range map[string]int{"revoked": 2, "active": 1} {
		got := list("?license_status=" + status)
		if len(got) != want {
			t.Errorf("license_status=%s: %d records, want %d", status, len(got), want)
		}
		for _, r := range got {
			if r.License == nil || string(r.License.Status) != status {
				t.Errorf("license_status=%s listed %+v", status, r.License)
			}
		}
	}
	// Page by page, the cursor keeps the filter.
	first := expect[brollclient.PurchaseList](t, e.do(t, 0, "GET", "/api/v1/broll/purchases?license_status=revoked&limit=1", root, nil), 200)
	if first.Pagination.NextCursor == nil || len(first.Purchases) != 1 {
		t.Fatalf("first page: %+v", first.Pagination)
	}
	next := list("?license_status=revoked&limit=1&cursor=" + *first.Pagination.NextCursor)
	if len(next) != 1 || next[0].License.Status != "revoked" || next[0].PurchaseId == first.Purchases[0].PurchaseId {
		t.Errorf("second page: %+v", next)
	}
	if r := e.do(t, 0, "GET", "/api/v1/broll/purchases?license_status=expired", root, nil); r.status != 400 ||
		problemOf(t, r).Code != "invalid_request" || deref(problemOf(t, r).Field) != "license_status" {
		t.Errorf("license_status=expired: %d %s", r.status, r.raw)
	}

	cs := mcpMustConnect(t, base, root)
	out := decode[brollclient.PurchaseList](t, callToolOK(t, cs, "list_purchases", map[string]any{"license_status": "revoked"}))
	if len(out.Purchases) != 2 {
		t.Errorf("list_purchases license_status=revoked: %d records", len(out.Purchases))
	}
	callToolErr(t, cs, "list_purchases", map[string]any{"license_status": "expired"}, "invalid_request")
}
