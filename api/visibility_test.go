package api

import (
	"net/url"
	"testing"

	"github.com/google/uuid"

	"broll/billing/billingtest"
	"broll/clients/go/brollclient"
)

// TestSiblingRootVisibilityMatrix: an account with two root keys, each with
// a customer, and a legacy purchase. Over REST and MCP alike, each key's
// purchase list, its month to date and its api_key_id filter show only what
// the key may see: a root key never sees a sibling root's or its customers'
// purchases, nor can it name their keys (404).
func TestSiblingRootVisibilityMatrix(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	base := e.serveLoopback(t)
	a := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 100000})
	b := a.AnotherRoot(t, e.pool, "second integration")
	other := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 100000})
	aCust, bCust := a.CustomerKey(t, e.pool, "a-customer"), b.CustomerKey(t, e.pool, "b-customer")
	otherCust := other.CustomerKey(t, e.pool, "other-customer")
	vids := billingtest.Videos(t, e.pool, 6, "easy") // 5.00 each

	e.buy(t, 0, a.RootKey.Secret, vids[0])
	e.buy(t, 0, aCust.Secret, vids[1], vids[2])
	e.buy(t, 0, b.RootKey.Secret, vids[3])
	e.buy(t, 0, bCust.Secret, vids[4])
	e.buy(t, 0, otherCust.Secret, vids[5])
	if _, err := e.pool.Exec(t.Context(), `INSERT INTO purchases (account_id, video_id, price_cents, tier, legacy, source, customer_email)
		VALUES ($1, $2, 500, 'easy', true, $3, 'old@customer.test')`, a.ID, vids[5], a.Source); err != nil {
		t.Fatal(err)
	}

	keys := []struct {
		name   string
		secret string
		sees   []uuid.UUID
	}{
		{"root A", a.RootKey.Secret, []uuid.UUID{vids[0], vids[1], vids[2], vids[5]}},
		{"root B", b.RootKey.Secret, []uuid.UUID{vids[3], vids[4], vids[5]}},
		{"A's customer", aCust.Secret, []uuid.UUID{vids[1], vids[2]}},
		{"B's customer", bCust.Secret, []uuid.UUID{vids[4]}},
	}
	check := func(t *testing.T, surface string, l brollclient.PurchaseList, bal brollclient.Balance, want []uuid.UUID) {
		t.Helper()
		if l.Summary.Count != len(want) || l.Summary.TotalAmount != 5*float64(len(want)) || len(l.Purchases) != len(want) {
			t.Fatalf("%s: %d purchases for %v USD listed %d, want %d", surface, l.Summary.Count, l.Summary.TotalAmount, len(l.Purchases), len(want))
		}
		seen := map[uuid.UUID]bool{}
		for _, p := range l.Purchases {
			seen[p.VideoId] = true
			if p.DownloadUrl == nil || p.DownloadRevoked {
				t.Errorf("%s: purchase of %s has no link", surface, p.VideoId)
			}
		}
		for _, v := range want {
			if !seen[v] {
				t.Errorf("%s: does not list %s", surface, v)
			}
		}
		if bal.MonthToDate.Purchases != len(want) || bal.MonthToDate.Amount != 5*float64(len(want)) {
			t.Errorf("%s: month to date %d for %v USD, want %d", surface, bal.MonthToDate.Purchases, bal.MonthToDate.Amount, len(want))
		}
	}
	for _, k := range keys {
		t.Run(k.name, func(t *testing.T) {
			check(t, "REST", decode[brollclient.PurchaseList](t, e.do(t, 0, "GET", "/api/v1/broll/purchases", k.secret, nil)),
				decode[brollclient.Balance](t, e.do(t, 0, "GET", "/api/v1/balance", k.secret, nil)), k.sees)
			cs := mcpMustConnect(t, base, k.secret)
			check(t, "MCP", decode[brollclient.PurchaseList](t, callToolOK(t, cs, "list_purchases", nil)),
				decode[brollclient.Balance](t, callToolOK(t, cs, "get_balance", nil)), k.sees)
		})
	}

	filters := []struct {
		name   string
		secret string
		key    uuid.UUID
		count  int // -1: 404 not_found
	}{
		{"root A names itself", a.RootKey.Secret, a.RootKey.ID, 1},
		{"root A names its customer", a.RootKey.Secret, aCust.ID, 2},
		{"root A names its sibling root", a.RootKey.Secret, b.RootKey.ID, -1},
		{"root A names its sibling's customer", a.RootKey.Secret, bCust.ID, -1},
		{"root A names another account's key", a.RootKey.Secret, otherCust.ID, -1},
		{"root A names no key", a.RootKey.Secret, uuid.New(), -1},
		{"root B names its customer", b.RootKey.Secret, bCust.ID, 1},
		{"root B names root A's customer", b.RootKey.Secret, aCust.ID, -1},
	}
	csA, csB := mcpMustConnect(t, base, a.RootKey.Secret), mcpMustConnect(t, base, b.RootKey.Secret)
	for _, f := range filters {
		t.Run(f.name, func(t *testing.T) {
			r := e.do(t, 0, "GET", "/api/v1/broll/purchases?api_key_id="+url.QueryEscape(f.key.String()), f.secret, nil)
			cs := csA
			if f.secret == b.RootKey.Secret {
				cs = csB
			}
			args := map[string]any{"api_key_id": f.key.String()}
			if f.count < 0 {
				if r.status != 404 || problemOf(t, r).Code != "not_found" {
					t.Errorf("REST: %d %s, want 404 not_found", r.status, r.raw)
				}
				callToolErr(t, cs, "list_purchases", args, "not_found")
				return
			}
			if r.status != 200 {
				t.Fatalf("REST: %d %s", r.status, r.raw)
			}
			for surface, r := range map[string]response{"REST": r, "MCP": callToolOK(t, cs, "list_purchases", args)} {
				if n := decode[brollclient.PurchaseList](t, r).Summary.Count; n != f.count {
					t.Errorf("%s: %d purchases, want %d", surface, n, f.count)
				}
			}
		})
	}

	// Revoking A's customer: root A still lists its purchases, with no
	// link (it would answer 403) and download_revoked, over REST and MCP.
	if r := e.do(t, 0, "DELETE", "/api/v1/keys?id="+aCust.ID.String(), a.RootKey.Secret, nil); r.status != 200 {
		t.Fatalf("revoke: %d %s", r.status, r.raw)
	}
	for surface, r := range map[string]response{
		"REST": e.do(t, 0, "GET", "/api/v1/broll/purchases?api_key_id="+aCust.ID.String(), a.RootKey.Secret, nil),
		"MCP":  callToolOK(t, csA, "list_purchases", map[string]any{"api_key_id": aCust.ID.String()}),
	} {
		l := decode[brollclient.PurchaseList](t, r)
		if len(l.Purchases) != 2 {
			t.Fatalf("%s: %d purchases of the revoked key, want 2", surface, len(l.Purchases))
		}
		for _, p := range l.Purchases {
			if p.DownloadUrl != nil || !p.DownloadRevoked {
				t.Errorf("%s: revoked key's purchase: download_url %v, download_revoked %v", surface, p.DownloadUrl, p.DownloadRevoked)
			}
		}
	}
}
