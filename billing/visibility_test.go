package billing_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"broll/billing"
	"broll/billing/billingtest"
	"broll/internal/apperr"
	"broll/internal/config"
	"broll/internal/testkit"
	"broll/tenancy"
	"broll/wiring"
	"broll/wiring/wiringtest"
)

// TestSiblingRootVisibility is the visibility matrix of an account with two
// root keys (one per integration), each with customers, plus legacy
// purchases: a root key sees its own, its customers' and the legacy ones,
// never its sibling's or the sibling's customers'; the account's users see
// all; the key filter, the export and the month to date follow the same rule.
func TestSiblingRootVisibility(t *testing.T) {
	t.Parallel()
	pool, ctx, svc := setup(t)
	a := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: 100000})
	b := a.AnotherRoot(t, pool, "second integration")
	other := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: 100000})
	aCust := a.CustomerKey(t, pool, "a-customer")
	bCust := b.CustomerKey(t, pool, "b-customer")
	otherCust := other.CustomerKey(t, pool, "other-customer")
	vids := billingtest.Videos(t, pool, 6, "easy") // 5.00 each

	buy := func(p tenancy.Principal, ids ...uuid.UUID) {
		t.Helper()
		mustBuy(ctx, t, svc, p, ids)
	}
	buy(a.Root, vids[0])
	buy(billingtest.Principal(a, aCust), vids[1], vids[2])
	buy(b.Root, vids[3])
	buy(billingtest.Principal(b, bCust), vids[4])
	buy(billingtest.Principal(other, otherCust), vids[5])
	if _, err := pool.Exec(ctx, `INSERT INTO purchases (account_id, video_id, price_cents, tier, legacy, source, customer_email)
		VALUES ($1, $2, 500, 'easy', true, $3, 'old@customer.test')`, a.ID, vids[5], a.Source); err != nil {
		t.Fatal(err)
	}

	owner := tenancy.AccountOwner(a.ID)
	principals := map[string]tenancy.Principal{
		"root A": a.Root, "root B": b.Root, "A's customer": billingtest.Principal(a, aCust),
		"B's customer": billingtest.Principal(b, bCust), "account owner": owner,
	}
	// What each principal sees, by video.
	sees := map[string][]uuid.UUID{
		"root A":        {vids[0], vids[1], vids[2], vids[5]},
		"root B":        {vids[3], vids[4], vids[5]},
		"A's customer":  {vids[1], vids[2]},
		"B's customer":  {vids[4]},
		"account owner": {vids[0], vids[1], vids[2], vids[3], vids[4], vids[5]},
	}
	for name, p := range principals {
		t.Run("list "+name, func(t *testing.T) {
			q, err := billing.ListParams{}.Parse(p)
			if err != nil {
				t.Fatal(err)
			}
			l, err := svc.ListPurchases(ctx, p, q, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := sees[name]
			if l.Total != len(want) || int64(l.Amount) != int64(500*len(want)) || len(l.Purchases) != len(want) {
				t.Fatalf("%d purchases for %d cents, want %d", l.Total, l.Amount, len(want))
			}
			got := map[uuid.UUID]bool{}
			for _, r := range l.Purchases {
				got[r.VideoID] = true
			}
			for _, v := range want {
				if !got[v] {
					t.Errorf("does not see %s", v)
				}
			}

			var exported int
			if err := svc.ExportPurchases(ctx, p, q, func(billing.PurchaseRecord) error { exported++; return nil }); err != nil {
				t.Fatal(err)
			}
			if exported != len(want) {
				t.Errorf("export has %d rows, want %d", exported, len(want))
			}

			sum, err := svc.Summary(ctx, p, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if sum.MonthPurchases != len(want) || int64(sum.MonthAmount) != int64(500*len(want)) {
				t.Errorf("month to date %d for %d cents, want %d", sum.MonthPurchases, sum.MonthAmount, len(want))
			}
		})
	}

	// api_key_id: a root key names itself or its own customers; anything
	// else is the same 404, a sibling's keys as much as another account's.
	keyFilter := []struct {
		who    string
		key    uuid.UUID
		status apperr.Code // "" for allowed
		count  int
	}{
		{"root A", a.RootKey.ID, "", 1},
		{"root A", aCust.ID, "", 2},
		{"root A", b.RootKey.ID, apperr.NotFound, 0},
		{"root A", bCust.ID, apperr.NotFound, 0},
		{"root A", otherCust.ID, apperr.NotFound, 0},
		{"root A", uuid.New(), apperr.NotFound, 0},
		{"root B", bCust.ID, "", 1},
		{"root B", aCust.ID, apperr.NotFound, 0},
		{"account owner", bCust.ID, "", 1},
		{"account owner", a.RootKey.ID, "", 1},
		{"account owner", otherCust.ID, apperr.NotFound, 0},
		{"A's customer", aCust.ID, apperr.Forbidden, 0},
	}
	for _, tc := range keyFilter {
		p := principals[tc.who]
		lp := billing.ListParams{APIKeyID: tc.key.String()}
		q, err := lp.Parse(p)
		if err == nil {
			var l billing.Listing
			l, err = svc.ListPurchases(ctx, p, q, nil)
			if err == nil && l.Total != tc.count {
				t.Errorf("%s filtering by %s: %d purchases, want %d", tc.who, tc.key, l.Total, tc.count)
			}
			exportErr := svc.ExportPurchases(ctx, p, q, func(billing.PurchaseRecord) error { return nil })
			if (exportErr == nil) != (err == nil) || (err != nil && apperr.CodeOf(exportErr) != apperr.CodeOf(err)) {
				t.Errorf("%s exporting by %s: %v, listing said %v", tc.who, tc.key, exportErr, err)
			}
		}
		if (err == nil) != (tc.status == "") || (err != nil && apperr.CodeOf(err) != tc.status) {
			t.Errorf("%s filtering by %s: %v, want %q", tc.who, tc.key, err, tc.status)
		}
	}
}

// TestRevokedKeyPurchaseHasNoLink: a root key listing a revoked customer's
// purchases gets them without a link (which would answer 403), marked as
// revoked; the others keep theirs.
func TestRevokedKeyPurchaseHasNoLink(t *testing.T) {
	t.Parallel()
	pool, ctx, svc := setup(t)
	a := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: 100000})
	gone := a.CustomerKey(t, pool, "gone")
	kept := a.CustomerKey(t, pool, "kept")
	vids := billingtest.Videos(t, pool, 2, "easy")
	for i, k := range []tenancy.IssuedKey{gone, kept} {
		mustBuy(ctx, t, svc, billingtest.Principal(a, k), vids[i:i+1])
	}
	rds := testkit.Redis(t)
	cfg := config.Defaults()
	cfg.RedisPrefix = rds.Prefix
	keyChanges := wiringtest.Open(t, cfg, wiring.Options{Parts: wiring.Redis, Pool: pool, Redis: rds.Client}).KeyChanges
	if _, err := keyChanges.Revoke(ctx, tenancy.KeysOfAccount(a.ID), gone.ID); err != nil {
		t.Fatal(err)
	}
	q, _ := billing.ListParams{}.Parse(a.Root)
	l, err := svc.ListPurchases(ctx, a.Root, q, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Purchases) != 2 {
		t.Fatalf("%d purchases, want 2", len(l.Purchases))
	}
	for _, r := range l.Purchases {
		revoked := *r.APIKeyID == gone.ID
		if r.DownloadRevoked != revoked || (r.Download.URL == "") != revoked {
			t.Errorf("key %s revoked=%v: download_revoked=%v url=%q", *r.APIKeyID, revoked, r.DownloadRevoked, r.Download.URL)
		}
	}
}
