package billing_test

import (
	"sync"
	"testing"

	"github.com/google/uuid"

	"broll/billing"
	"broll/billing/billingtest"
	"broll/internal/apperr"
)

func TestLegacyPurchaseRules(t *testing.T) {
	t.Parallel()
	pool, ctx, svc := setup(t)
	acct := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: 4000})
	easy := billingtest.Videos(t, pool, 2, "easy")
	hard := billingtest.Videos(t, pool, 1, "hard")
	ann := billing.LegacyBuyer{AccountID: acct.ID, Source: acct.Source, CustomerEmail: "ann@example.com"}
	bob := billing.LegacyBuyer{AccountID: acct.ID, Source: acct.Source, CustomerEmail: "bob@example.com"}
	anon := billing.LegacyBuyer{AccountID: acct.ID, Source: acct.Source}

	r, err := svc.LegacyPurchase(ctx, ann, []uuid.UUID{easy[0], easy[0]})
	if err != nil || r.TotalCharged != 500 || r.Balance != 3500 || len(r.Purchases) != 1 || r.Purchases[0].AlreadyOwned ||
		r.Purchases[0].Download.URL == "" {
		t.Fatalf("first purchase: %+v %v", r, err)
	}
	first := r.Purchases[0].PurchaseID

	// The same customer again: the same purchase, not charged.
	r, err = svc.LegacyPurchase(ctx, ann, []uuid.UUID{easy[0]})
	if err != nil || r.TotalCharged != 0 || r.Balance != 3500 || !r.Purchases[0].AlreadyOwned || r.Purchases[0].PurchaseID != first {
		t.Fatalf("repeat: %+v %v", r, err)
	}
	// Another customer of the same source, and no customer at all: charged.
	if r, err = svc.LegacyPurchase(ctx, bob, []uuid.UUID{easy[0]}); err != nil || r.TotalCharged != 500 || r.Purchases[0].PurchaseID == first {
		t.Fatalf("bob: %+v %v", r, err)
	}
	if r, err = svc.LegacyPurchase(ctx, anon, []uuid.UUID{easy[0]}); err != nil || r.TotalCharged != 500 {
		t.Fatalf("no email: %+v %v", r, err)
	}
	if r, err = svc.LegacyPurchase(ctx, anon, []uuid.UUID{easy[0]}); err != nil || r.TotalCharged != 0 {
		t.Fatalf("no email, repeat: %+v %v", r, err)
	}

	// All or nothing: an unknown id is 404 naming it, an overdraft is 402
	// with the numbers; nothing is charged either way.
	unknown := uuid.New()
	_, err = svc.LegacyPurchase(ctx, ann, []uuid.UUID{easy[1], unknown})
	if ae, ok := apperr.As(err); !ok || ae.Code != apperr.NotFound || ae.Fields["unknown_video_ids"] == nil {
		t.Fatalf("unknown: %v", err)
	}
	_, err = svc.LegacyPurchase(ctx, ann, []uuid.UUID{easy[1], hard[0]}) // 30 USD of 25
	if ae, ok := apperr.As(err); !ok || ae.Code != apperr.InsufficientCredits || ae.Fields["required"] == nil {
		t.Fatalf("overdraft: %v", err)
	}
	if got := checkInvariants(t, pool, acct.ID); got != 2500 {
		t.Fatalf("balance %s after refusals, want 25.00", got)
	}
	if _, err := svc.LegacyPurchase(ctx, ann, nil); code(err) != apperr.Invalid {
		t.Fatalf("no ids: %v", err)
	}

	// Rows are legacy: no key, the source and the email recorded.
	var legacy int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM purchases WHERE account_id = $1 AND legacy AND api_key_id IS NULL
		AND source = $2`, acct.ID, acct.Source).Scan(&legacy); err != nil || legacy != 3 {
		t.Fatalf("legacy rows: %d %v", legacy, err)
	}

	// The listing: all of the account's legacy purchases, or one customer's.
	l, err := svc.LegacyPurchases(ctx, acct.ID, mustLegacyQuery(t, billing.LegacyListParams{}))
	if err != nil || l.Total != 3 || l.Amount != 1500 || !l.Purchases[0].Legacy || l.Purchases[0].Download.URL == "" {
		t.Fatalf("listing: %+v %v", l, err)
	}
	l, err = svc.LegacyPurchases(ctx, acct.ID, mustLegacyQuery(t, billing.LegacyListParams{CustomerEmail: "ANN@example.com"}))
	if err != nil || l.Total != 1 || *l.Purchases[0].CustomerEmail != "ann@example.com" || l.Purchases[0].PurchaseID != first {
		t.Fatalf("ann's listing: %+v %v", l, err)
	}
	// Another account sees none of them.
	other := billingtest.NewAccount(t, pool, billingtest.AccountOpts{})
	if l, err = svc.LegacyPurchases(ctx, other.ID, mustLegacyQuery(t, billing.LegacyListParams{})); err != nil || l.Total != 0 {
		t.Fatalf("other account: %+v %v", l, err)
	}
}

func mustLegacyQuery(t *testing.T, p billing.LegacyListParams) billing.LegacyListQuery {
	t.Helper()
	q, err := p.Parse()
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func TestNormalizeCustomerEmail(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"": "", "  Ann@Example.COM ": "ann@example.com", "a.b+c@d.io": "a.b+c@d.io"} {
		if got, err := billing.NormalizeCustomerEmail(in); err != nil || got != want {
			t.Errorf("%q: %q %v", in, got, err)
		}
	}
	for _, bad := range []string{"ann", "Ann <ann@example.com>", "a@b@c", "@example.com", string(make([]byte, 201)) + "@x.io"} {
		if _, err := billing.NormalizeCustomerEmail(bad); code(err) != apperr.Invalid {
			t.Errorf("%q accepted: %v", bad, err)
		}
	}
}

// Many concurrent purchases of one video for one customer charge it once.
func TestLegacySameCustomerConcurrently(t *testing.T) {
	t.Parallel()
	pool, ctx, svc := setup(t)
	acct := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: 10000})
	vid := billingtest.Videos(t, pool, 1, "hard")[0]
	buyer := billing.LegacyBuyer{AccountID: acct.ID, Source: acct.Source, CustomerEmail: "ann@example.com"}
	var wg sync.WaitGroup
	ids := make([]uuid.UUID, 8)
	errs := make([]error, 8)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := svc.LegacyPurchase(ctx, buyer, []uuid.UUID{vid})
			errs[i] = err
			if err == nil {
				ids[i] = r.Purchases[0].PurchaseID
			}
		}()
	}
	wg.Wait()
	for i := range ids {
		if errs[i] != nil || ids[i] != ids[0] {
			t.Fatalf("call %d: %v, purchase %s vs %s", i, errs[i], ids[i], ids[0])
		}
	}
	if got := checkInvariants(t, pool, acct.ID); got != 7500 {
		t.Fatalf("balance %s, want 75.00 (charged once)", got)
	}
}
