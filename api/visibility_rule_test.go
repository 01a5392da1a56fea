package api

import (
	"slices"
	"testing"

	"github.com/google/uuid"

	"broll/billing"
	"broll/billing/billingtest"
	"broll/clients/go/brollclient"
	"broll/tenancy"
)

// TestOneVisibilityRuleEveryPath: who may see a purchase is one rule
// (billing/visible, with the key family of broll_key_family), and every
// path that reads purchases or acts on them agrees with it on one table of
// cases: the purchase list and month to date over REST, the export and the
// Go listing, the licence read over REST and in Go, and the webhook
// fan-out. The cases: a root key, its customers (one revoked after
// buying), its test key, a sibling root key and its customer, another
// account, the account's owners in the live and the test view, and a
// legacy purchase. Changing the rule in one path alone fails here.
func TestOneVisibilityRuleEveryPath(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{configure: loopbackHooks})
	ctx := t.Context()
	a := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 100000})
	b := a.AnotherRoot(t, e.pool, "second integration")
	other := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 100000})
	c1, c2 := a.CustomerKey(t, e.pool, "c1"), a.CustomerKey(t, e.pool, "c2")
	test := a.TestKey(t, e.pool, "sandbox")
	bc := b.CustomerKey(t, e.pool, "b-customer")
	oc := other.CustomerKey(t, e.pool, "other-customer")

	// One webhook endpoint per root key, subscribed to purchases: the
	// fan-out writes their deliveries (no worker runs here, so they stay
	// pending and are read from the table).
	endpoint := map[string]uuid.UUID{}
	for name, secret := range map[string]string{"rootA": a.RootKey.Secret, "rootB": b.RootKey.Secret, "otherRoot": other.RootKey.Secret} {
		w := expect[brollclient.WebhookCreated](t, e.do(t, 0, "POST", "/api/v1/webhooks", secret, map[string]any{
			"url": "http://127.0.0.1:9/hook", "events": []string{"purchase.completed"},
		}), 201)
		endpoint[name] = w.Id
	}

	vids := billingtest.Videos(t, e.pool, 8, "easy")
	buyers := []struct {
		name   string
		secret string
	}{{"rootA", a.RootKey.Secret}, {"c1", c1.Secret}, {"c2", c2.Secret}, {"test", test.Secret},
		{"rootB", b.RootKey.Secret}, {"bc", bc.Secret}, {"oc", oc.Secret}}
	bought := map[uuid.UUID]string{} // video -> purchase name
	for i, by := range buyers {
		e.buy(t, 0, by.secret, vids[i])
		bought[vids[i]] = by.name
	}
	if _, err := e.pool.Exec(ctx, `INSERT INTO purchases (account_id, video_id, price_cents, tier, legacy, source, customer_email)
		VALUES ($1, $2, 500, 'easy', true, $3, 'old@customer.test')`, a.ID, vids[7], a.Source); err != nil {
		t.Fatal(err)
	}
	bought[vids[7]] = "legacy"
	if r := e.do(t, 0, "DELETE", "/api/v1/keys?id="+c2.ID.String(), a.RootKey.Secret, nil); r.status != 200 {
		t.Fatalf("revoke c2: %d %s", r.status, r.raw)
	}
	licence := map[string]string{} // purchase name -> licence id
	rows, err := e.pool.Query(ctx, `SELECT video_id, license_id FROM purchases WHERE license_id IS NOT NULL AND video_id = ANY ($1)`, vids)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var v uuid.UUID
		var id string
		if err := rows.Scan(&v, &id); err != nil {
			t.Fatal(err)
		}
		licence[bought[v]] = id
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}

	principal := func(k tenancy.IssuedKey) tenancy.Principal {
		p, err := e.ctl.Auth.Authenticate(ctx, k.Secret, false)
		if err != nil {
			t.Fatalf("authenticate %s: %v", k.Label, err)
		}
		return p
	}
	ownerTest := tenancy.AccountOwner(a.ID)
	ownerTest.Test = true
	// The table: what each viewer sees. secret is "" for a viewer that has
	// no key to call the API with (the account's owners, a revoked key).
	cases := []struct {
		name   string
		p      tenancy.Principal
		secret string
		sees   []string
	}{
		{"root A", a.Root, a.RootKey.Secret, []string{"rootA", "c1", "c2", "legacy"}},
		{"customer c1", principal(c1), c1.Secret, []string{"c1"}},
		{"test key", principal(test), test.Secret, []string{"test"}},
		{"sibling root B", b.Root, b.RootKey.Secret, []string{"rootB", "bc", "legacy"}},
		{"B's customer", principal(bc), bc.Secret, []string{"bc"}},
		{"another account's customer", principal(oc), oc.Secret, []string{"oc"}},
		{"another account's root", other.Root, other.RootKey.Secret, []string{"oc"}},
		{"account owner", tenancy.AccountOwner(a.ID), "", []string{"rootA", "c1", "c2", "rootB", "bc", "legacy"}},
		{"account owner, test view", ownerTest, "", []string{"test"}},
	}
	names := func(ids []uuid.UUID) []string {
		var out []string
		for _, v := range ids {
			out = append(out, bought[v])
		}
		slices.Sort(out)
		return out
	}
	for _, c := range cases {
		want := slices.Clone(c.sees)
		slices.Sort(want)
		t.Run(c.name, func(t *testing.T) {
			var exported []uuid.UUID
			if err := e.ctl.Billing.ExportPurchases(ctx, c.p, billing.ListQuery{}, func(r billing.PurchaseRecord) error {
				exported = append(exported, r.VideoID)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if got := names(exported); !slices.Equal(got, want) {
				t.Errorf("export: %v, want %v", got, want)
			}
			l, err := e.ctl.Billing.ListPurchases(ctx, c.p, billing.ListQuery{Limit: 100}, nil)
			if err != nil {
				t.Fatal(err)
			}
			var listed []uuid.UUID
			for _, r := range l.Purchases {
				listed = append(listed, r.VideoID)
			}
			if got := names(listed); !slices.Equal(got, want) {
				t.Errorf("listing: %v, want %v", got, want)
			}
			for name, id := range licence {
				_, err := e.ctl.Licenses.Get(ctx, c.p, id)
				if seen := err == nil; seen != slices.Contains(want, name) {
					t.Errorf("licence of %s read in Go: err %v, want seen %v", name, err, !seen)
				}
			}
			if c.secret == "" {
				return
			}
			rest := decode[brollclient.PurchaseList](t, e.do(t, 0, "GET", "/api/v1/broll/purchases", c.secret, nil))
			var restIDs []uuid.UUID
			for _, r := range rest.Purchases {
				restIDs = append(restIDs, r.VideoId)
			}
			if got := names(restIDs); !slices.Equal(got, want) {
				t.Errorf("REST list: %v, want %v", got, want)
			}
			bal := decode[brollclient.Balance](t, e.do(t, 0, "GET", "/api/v1/balance", c.secret, nil))
			if bal.MonthToDate.Purchases != len(want) {
				t.Errorf("month to date: %d purchases, want %d", bal.MonthToDate.Purchases, len(want))
			}
			for name, id := range licence {
				r := e.do(t, 0, "GET", "/api/v1/licenses/"+id, c.secret, nil)
				if seen := r.status == 200; seen != slices.Contains(want, name) || (!seen && r.status != 404) {
					t.Errorf("licence of %s over REST: %d, want seen %v (else 404)", name, r.status, slices.Contains(want, name))
				}
			}
		})
	}

	// The fan-out: a purchase's event reaches the endpoint of the root key
	// whose family holds the buyer, which is exactly the live purchases that
	// root key sees (legacy ones write no event), plus its test key's,
	// which reach it marked livemode false.
	fanout := map[string][]string{
		"rootA":     {"rootA", "c1", "c2", "test"},
		"rootB":     {"rootB", "bc"},
		"otherRoot": {"oc"},
	}
	for root, want := range fanout {
		var got []string
		rows, err := e.pool.Query(ctx, `SELECT (ev.data -> 'key' ->> 'id')::uuid FROM webhook_deliveries d
			JOIN webhook_events ev ON ev.id = d.event_id WHERE d.endpoint_id = $1 AND ev.type = 'purchase.completed'`, endpoint[root])
		if err != nil {
			t.Fatal(err)
		}
		byKey := map[uuid.UUID]string{a.RootKey.ID: "rootA", c1.ID: "c1", c2.ID: "c2", test.ID: "test",
			b.RootKey.ID: "rootB", bc.ID: "bc", oc.ID: "oc"}
		for rows.Next() {
			var k uuid.UUID
			if err := rows.Scan(&k); err != nil {
				t.Fatal(err)
			}
			got = append(got, byKey[k])
		}
		if rows.Err() != nil {
			t.Fatal(rows.Err())
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("fan-out to %s's endpoint: %v, want %v", root, got, want)
		}
	}
}
