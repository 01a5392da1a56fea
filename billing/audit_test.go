package billing_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"broll/billing"
	"broll/billing/billingtest"
	"broll/internal/apperr"
	"broll/tenancy"
)

func TestAuditFlagsRedistribution(t *testing.T) {
	t.Parallel()
	pool, ctx, svc := setup(t)
	acct := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: 10000})
	honestKey := acct.CustomerKey(t, pool, "honest")
	sharerKey := acct.CustomerKey(t, pool, "sharer")
	vids := billingtest.Videos(t, pool, 2, "easy")
	fetch := func(k tenancy.IssuedKey, v uuid.UUID, addrs int) {
		t.Helper()
		key := k.ID
		r, err := svc.Purchase(ctx, billingtest.Principal(acct, k), billing.PurchaseRequest{VideoIDs: []uuid.UUID{v}})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < addrs; i++ {
			d := billing.Download{PurchaseID: r.Purchases[0].PurchaseID, AccountID: acct.ID, KeyID: uuid.NullUUID{UUID: key, Valid: true}}
			for j := 0; j < 2; j++ { // repeated fetches from one address count once
				if _, err := svc.LogDownload(ctx, billing.DownloadEvent{Download: d, ClientAddr: fmt.Sprintf("203.0.113.%d", i+1), Status: 200}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	fetch(honestKey, vids[0], 2)
	fetch(sharerKey, vids[1], 7)

	rep, err := svc.AuditDownloads(ctx, time.Now().Add(-time.Hour), 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Purchases) != 1 || rep.Purchases[0].Addresses != 7 || rep.Purchases[0].Downloads != 14 ||
		len(rep.Keys) != 1 || *rep.Keys[0].APIKeyID != sharerKey.ID || rep.Keys[0].CustomerLabel != "sharer" {
		t.Fatalf("audit: %+v", rep)
	}
	if rep, _ := svc.AuditDownloads(ctx, time.Now().Add(time.Minute), 3); len(rep.Purchases) != 0 {
		t.Fatal("audit ignored --since")
	}
	if _, err := svc.AuditDownloads(ctx, time.Now(), 0); apperr.CodeOf(err) != apperr.Invalid {
		t.Fatal("threshold 0 accepted")
	}
}

// TestStatementMatchesListing: per-key totals add up to the purchases list's
// summary for the same month.
func TestStatementMatchesListing(t *testing.T) {
	t.Parallel()
	pool, ctx, svc := setup(t)
	acct := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: 100000})
	a := billingtest.Principal(acct, acct.CustomerKey(t, pool, "a"))
	b := billingtest.Principal(acct, acct.CustomerKey(t, pool, "b"))
	vids := billingtest.Videos(t, pool, 4, "medium")
	for _, buy := range []struct {
		p   tenancy.Principal
		ids []uuid.UUID
	}{{a, vids[:3]}, {b, vids[1:2]}, {acct.Root, vids[3:]}} {
		mustBuy(ctx, t, svc, buy.p, buy.ids)
	}
	month := time.Now().UTC().Format("2006-01")
	st, err := svc.MonthlyStatement(ctx, acct.ID, month)
	if err != nil {
		t.Fatal(err)
	}
	q, _ := billing.ListParams{StartDate: st.StartDate, EndDate: st.EndDate}.Parse(acct.Root)
	l, err := svc.ListPurchases(ctx, acct.Root, q, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Purchases != l.Total || st.Amount != l.Amount || st.LedgerCharges != st.Amount || len(st.Keys) != 3 || st.Amount != 5000 {
		t.Fatalf("statement %+v vs listing %d/%d", st, l.Total, l.Amount)
	}
	if _, err := svc.MonthlyStatement(ctx, acct.ID, "2026-13"); apperr.CodeOf(err) != apperr.Invalid {
		t.Fatalf("bad month: %v", err)
	}
	if _, err := svc.MonthlyStatement(ctx, uuid.New(), month); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("unknown account: %v", err)
	}
}
