package billing_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"broll/billing"
	"broll/billing/billingtest"
	"broll/internal/apperr"
	"broll/internal/money"
	"broll/tenancy"
)

// TestLedgerRunningBalance: every page shows each entry with the pool right
// after it, newest first, the oldest entry's balance being its own amount,
// and nothing of another account.
func TestLedgerRunningBalance(t *testing.T) {
	t.Parallel()
	pool, ctx, svc := setup(t)
	acct := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: 5000})
	other := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: 9999})
	alice := billingtest.Principal(acct, acct.CustomerKey(t, pool, "alice"))
	vids := billingtest.Videos(t, pool, 4, "medium")
	for _, v := range vids[:3] {
		if _, err := svc.Purchase(ctx, alice, billing.PurchaseRequest{VideoIDs: []uuid.UUID{v}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := svc.TopUp(ctx, acct.ID, 250, "top-up"); err != nil {
		t.Fatal(err)
	}
	mustBuy(ctx, t, svc, billingtest.Principal(other, other.RootKey), vids[3:])

	// Oldest to newest: +50.00, -10, -10, -10, +2.50 -> 22.50 now.
	wantAmounts := []money.Cents{250, -1000, -1000, -1000, 5000}
	wantBalances := []money.Cents{2250, 2000, 3000, 4000, 5000}
	var all []billing.LedgerEntry
	for offset := 0; offset < 6; offset += 2 {
		page, err := svc.Ledger(ctx, acct.ID, false, 2, offset)
		if err != nil {
			t.Fatal(err)
		}
		if page.Total != 5 {
			t.Fatalf("total %d", page.Total)
		}
		all = append(all, page.Entries...)
	}
	if len(all) != 5 {
		t.Fatalf("%d entries over the pages", len(all))
	}
	for i, e := range all {
		if e.Amount != wantAmounts[i] || e.Balance != wantBalances[i] {
			t.Errorf("entry %d: %s after %s, want %s after %s", i, e.Balance, e.Amount, wantBalances[i], wantAmounts[i])
		}
	}
	if all[1].Kind != "purchase" || all[1].KeyLabel != "alice" || all[1].VideoTitle == "" || all[1].PurchaseID == nil {
		t.Fatalf("purchase entry: %+v", all[1])
	}
	if all[0].Kind != "topup" || all[0].Note != "top-up" {
		t.Fatalf("top-up entry: %+v", all[0])
	}
	if page, err := svc.Ledger(ctx, acct.ID, false, 2, 100); err != nil || len(page.Entries) != 0 || page.Total != 5 {
		t.Fatalf("past the end: %+v %v", page, err)
	}
}

func TestDailySpend(t *testing.T) {
	t.Parallel()
	pool, ctx, svc := setup(t)
	acct := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: 100000})
	other := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: 100000})
	alice := billingtest.Principal(acct, acct.CustomerKey(t, pool, "alice"))
	vids := billingtest.Videos(t, pool, 4, "easy")
	for _, p := range []tenancy.Principal{alice, acct.Root} {
		mustBuy(ctx, t, svc, p, vids[:2])
	}
	mustBuy(ctx, t, svc, other.Root, vids[:1])
	// Two of alice's purchases happened three days ago.
	if _, err := pool.Exec(ctx, `UPDATE purchases SET purchased_at = now() - interval '3 days' WHERE api_key_id = $1`, alice.KeyID); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	days, err := svc.DailySpend(ctx, tenancy.AccountOwner(acct.ID), now, 30)
	if err != nil {
		t.Fatal(err)
	}
	if len(days) != 30 || days[29].Day.Format("2006-01-02") != now.UTC().Format("2006-01-02") {
		t.Fatalf("%d days, last %v", len(days), days[len(days)-1].Day)
	}
	if days[29].Amount != 1000 || days[29].Purchases != 2 || days[26].Amount != 1000 || days[26].Purchases != 2 {
		t.Fatalf("today %+v, three days ago %+v", days[29], days[26])
	}
	var total money.Cents
	for _, d := range days {
		total += d.Amount
	}
	if total != 2000 {
		t.Fatalf("30-day total %s, want 20.00 (another account's purchase counted?)", total)
	}
	// A customer key sees only its own.
	if days, _ := svc.DailySpend(ctx, alice, now, 30); days[29].Amount != 0 || days[26].Amount != 1000 {
		t.Fatalf("alice: today %+v, three days ago %+v", days[29], days[26])
	}
}

// TestExportPurchases: the export is the listing's filter, every row of it,
// oldest first, and refuses another account's key.
func TestExportPurchases(t *testing.T) {
	t.Parallel()
	pool, ctx, svc := setup(t)
	acct := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: 100000})
	other := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: 100000})
	aliceKey := acct.CustomerKey(t, pool, "alice")
	alice := billingtest.Principal(acct, aliceKey)
	vids := billingtest.Videos(t, pool, 5, "easy")
	mustBuy(ctx, t, svc, alice, vids[:3])
	mustBuy(ctx, t, svc, acct.Root, vids[3:4])
	mustBuy(ctx, t, svc, other.Root, vids[4:])
	owner := tenancy.AccountOwner(acct.ID)
	export := func(lp billing.ListParams) ([]billing.PurchaseRecord, error) {
		q, err := lp.Parse(owner)
		if err != nil {
			return nil, err
		}
		var out []billing.PurchaseRecord
		err = svc.ExportPurchases(ctx, owner, q, func(r billing.PurchaseRecord) error {
			out = append(out, r)
			return nil
		})
		return out, err
	}
	all, err := export(billing.ListParams{})
	if err != nil || len(all) != 4 {
		t.Fatalf("export: %d %v", len(all), err)
	}
	for i := 1; i < len(all); i++ {
		if all[i].PurchasedAt.Before(all[i-1].PurchasedAt) {
			t.Fatal("export is not oldest first")
		}
	}
	for _, r := range all {
		if r.VideoID == vids[4] {
			t.Fatal("another account's purchase exported")
		}
	}
	mine, err := export(billing.ListParams{APIKeyID: aliceKey.ID.String()})
	if err != nil || len(mine) != 3 || mine[0].CustomerLabel != "alice" {
		t.Fatalf("alice's: %d %v", len(mine), err)
	}
	if _, err := export(billing.ListParams{APIKeyID: other.RootKey.ID.String()}); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("another account's key: %v", err)
	}
	if _, err := export(billing.ListParams{SemanticSearch: "a woman laughing"}); apperr.CodeOf(err) != apperr.Invalid {
		t.Fatalf("semantic export: %v", err)
	}
}
