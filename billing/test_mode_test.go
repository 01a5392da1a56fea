package billing_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"broll/billing"
	"broll/billing/billingtest"
	"broll/internal/apperr"
	"broll/internal/config"
	"broll/internal/money"
	"broll/tenancy"
)

// checkTestInvariants: the test balance is never negative and equals the
// test ledger; an account without one has no test ledger either.
func checkTestInvariants(t *testing.T, pool *pgxpool.Pool, account uuid.UUID) money.Cents {
	t.Helper()
	var balance *int64
	var ledger int64
	err := pool.QueryRow(context.Background(), `
		SELECT (SELECT balance_cents FROM test_balances WHERE account_id = $1),
		       (SELECT coalesce(sum(amount_cents), 0) FROM ledger WHERE account_id = $1 AND NOT livemode)`,
		account).Scan(&balance, &ledger)
	if err != nil {
		t.Fatal(err)
	}
	if balance == nil {
		if ledger != 0 {
			t.Fatalf("test ledger sums to %d without a test balance", ledger)
		}
		return 0
	}
	if *balance < 0 || *balance != ledger {
		t.Fatalf("test invariant broken: test balance %d, test ledger sum %d", *balance, ledger)
	}
	return money.Cents(*balance)
}

func purchaseIDs(l billing.Listing) map[uuid.UUID]bool {
	out := map[uuid.UUID]bool{}
	for _, r := range l.Purchases {
		out[r.PurchaseID] = true
	}
	return out
}

// A test key buys from the test balance; its purchases never reach the live
// pool, the live ledger, or any live list, summary, export or statement,
// and it sees none of the live ones.
func TestTestModeIsolation(t *testing.T) {
	t.Parallel()
	pool, ctx, svc := setup(t)
	acct := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: 10_000})
	liveKey := billingtest.Principal(acct, acct.CustomerKey(t, pool, "live customer"))
	testIssued := acct.TestKey(t, pool, "test customer")
	testKey := billingtest.Principal(acct, testIssued)
	videos := billingtest.Videos(t, pool, 4, "medium") // 10.00 each

	if !testKey.Test || testIssued.Prefix[:9] != "dsk_test_" || testIssued.Secret[:9] != "dsk_test_" {
		t.Fatalf("test key %q (prefix %q, test %v)", testIssued.Secret, testIssued.Prefix, testKey.Test)
	}

	bought, err := svc.Purchase(ctx, testKey, billing.PurchaseRequest{VideoIDs: videos[:2]})
	if err != nil {
		t.Fatal(err)
	}
	if bought.Livemode || bought.TotalCharged != 2000 || bought.Balance != billing.DefaultTestBalance-2000 {
		t.Fatalf("test purchase: livemode %v, charged %s, balance %s", bought.Livemode, bought.TotalCharged, bought.Balance)
	}
	live, err := svc.Purchase(ctx, liveKey, billing.PurchaseRequest{VideoIDs: videos[1:3]})
	if err != nil {
		t.Fatal(err)
	}
	if !live.Livemode || live.Balance != 8000 {
		t.Fatalf("live purchase: livemode %v, balance %s", live.Livemode, live.Balance)
	}
	if b := checkInvariants(t, pool, acct.ID); b != 8000 {
		t.Fatalf("live pool %s, want 80.00: test purchases touched it", b)
	}
	if b := checkTestInvariants(t, pool, acct.ID); b != billing.DefaultTestBalance-2000 {
		t.Fatalf("test balance %s", b)
	}
	testIDs := map[uuid.UUID]bool{bought.Purchases[0].PurchaseID: true, bought.Purchases[1].PurchaseID: true}

	list := func(p tenancy.Principal) billing.Listing {
		t.Helper()
		q, err := billing.ListParams{}.Parse(p)
		if err != nil {
			t.Fatal(err)
		}
		l, err := svc.ListPurchases(ctx, p, q, nil)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	owner := tenancy.AccountOwner(acct.ID)
	ownerTest := owner
	ownerTest.Test = true

	t.Run("live lists and summaries leave test purchases out", func(t *testing.T) {
		for name, p := range map[string]tenancy.Principal{"root": acct.Root, "live sibling": liveKey, "account owner": owner} {
			l := list(p)
			for id := range purchaseIDs(l) {
				if testIDs[id] {
					t.Errorf("%s lists test purchase %s", name, id)
				}
			}
			if l.Total != 2 || l.Amount != 2000 {
				t.Errorf("%s: summary %d purchases, %s; want 2 and 20.00", name, l.Total, l.Amount)
			}
			sum, err := svc.Summary(ctx, p, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if !sum.Livemode || sum.Balance != 8000 || sum.MonthAmount != 2000 {
				t.Errorf("%s: balance %+v", name, sum)
			}
		}
	})
	t.Run("the root key's filter on its test key finds nothing", func(t *testing.T) {
		q, err := billing.ListParams{APIKeyID: testIssued.ID.String()}.Parse(acct.Root)
		if err != nil {
			t.Fatal(err)
		}
		l, err := svc.ListPurchases(ctx, acct.Root, q, nil)
		if err != nil || l.Total != 0 {
			t.Fatalf("root filtered on its test key: %d purchases, %v", l.Total, err)
		}
	})
	t.Run("a test key sees its test purchases and the test balance only", func(t *testing.T) {
		l := list(testKey)
		if got := purchaseIDs(l); len(got) != 2 || !got[bought.Purchases[0].PurchaseID] || !got[bought.Purchases[1].PurchaseID] {
			t.Fatalf("test key lists %v", got)
		}
		for _, r := range l.Purchases {
			if r.Livemode {
				t.Errorf("test purchase %s says livemode", r.PurchaseID)
			}
		}
		sum, err := svc.Summary(ctx, testKey, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if sum.Livemode || sum.Balance != billing.DefaultTestBalance-2000 || sum.MonthPurchases != 2 || sum.MonthAmount != 2000 {
			t.Fatalf("test key balance %+v", sum)
		}
		// The dashboard's test view of the account.
		if got := purchaseIDs(list(ownerTest)); len(got) != 2 || !got[bought.Purchases[0].PurchaseID] {
			t.Fatalf("owner's test view lists %v", got)
		}
	})
	t.Run("exports, statements, daily spend and the ledger are live", func(t *testing.T) {
		for name, p := range map[string]tenancy.Principal{"root": acct.Root, "account owner": owner} {
			q, err := billing.ListParams{}.Parse(p)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			err = svc.ExportPurchases(ctx, p, q, func(r billing.PurchaseRecord) error {
				if testIDs[r.PurchaseID] || !r.Livemode {
					t.Errorf("%s export holds test purchase %s", name, r.PurchaseID)
				}
				n++
				return nil
			})
			if err != nil || n != 2 {
				t.Fatalf("%s export: %d rows, %v", name, n, err)
			}
		}
		st, err := svc.MonthlyStatement(ctx, acct.ID, time.Now().UTC().Format("2006-01"))
		if err != nil {
			t.Fatal(err)
		}
		if st.Purchases != 2 || st.Amount != 2000 || st.LedgerCharges != 2000 {
			t.Fatalf("statement %+v", st)
		}
		days, err := svc.DailySpend(ctx, owner, time.Now(), 1)
		if err != nil || len(days) != 1 || days[0].Amount != 2000 {
			t.Fatalf("daily spend %+v %v", days, err)
		}
		page, err := svc.Ledger(ctx, acct.ID, false, 50, 0)
		if err != nil {
			t.Fatal(err)
		}
		if page.Total != 3 || page.Entries[0].Balance != 8000 { // top-up and two purchases
			t.Fatalf("live ledger %+v", page)
		}
		tpage, err := svc.Ledger(ctx, acct.ID, true, 50, 0)
		if err != nil {
			t.Fatal(err)
		}
		if tpage.Total != 3 || tpage.Entries[0].Balance != billing.DefaultTestBalance-2000 {
			t.Fatalf("test ledger %+v", tpage)
		}
		if sum := checkInvariants(t, pool, acct.ID); sum != 8000 {
			t.Fatalf("live ledger sum %s", sum)
		}
	})
	t.Run("a test download serves the preview, or refuses", func(t *testing.T) {
		id := bought.Purchases[0].PurchaseID
		if _, err := svc.Authorize(ctx, id); apperr.CodeOf(err) != apperr.PreviewNotReady {
			t.Fatalf("test download without a preview: %v", err)
		}
		if _, err := pool.Exec(ctx, `UPDATE videos SET preview_key = 'clips/' || id || '/preview.mp4' WHERE id = $1`,
			bought.Purchases[0].VideoID); err != nil {
			t.Fatal(err)
		}
		d, err := svc.Authorize(ctx, id)
		if err != nil || d.Livemode || d.MediaKey != "clips/"+d.VideoID.String()+"/preview.mp4" || d.ContentType != "video/mp4" {
			t.Fatalf("test download %+v %v", d, err)
		}
		d, err = svc.Authorize(ctx, live.Purchases[0].PurchaseID)
		if err != nil || !d.Livemode || d.MediaKey != "clips/"+d.VideoID.String()+"/full.avi" {
			t.Fatalf("live download %+v %v", d, err)
		}
	})
	t.Run("reset-test restores the test balance, purchases kept", func(t *testing.T) {
		b, err := svc.ResetTestBalance(ctx, acct.ID)
		if err != nil || b != billing.DefaultTestBalance {
			t.Fatalf("reset: %s %v", b, err)
		}
		if got := checkTestInvariants(t, pool, acct.ID); got != billing.DefaultTestBalance {
			t.Fatalf("test balance after reset %s", got)
		}
		if got := purchaseIDs(list(testKey)); len(got) != 2 {
			t.Fatalf("test purchases after reset: %d", len(got))
		}
		again, err := svc.Purchase(ctx, testKey, billing.PurchaseRequest{VideoIDs: videos[:1]})
		if err != nil || again.TotalCharged != 0 || !again.Purchases[0].AlreadyOwned {
			t.Fatalf("owned after reset: %+v %v", again, err)
		}
		if b := checkInvariants(t, pool, acct.ID); b != 8000 {
			t.Fatalf("live pool %s after reset", b)
		}
		if _, err := svc.ResetTestBalance(ctx, uuid.New()); apperr.CodeOf(err) != apperr.NotFound {
			t.Fatalf("reset of an unknown account: %v", err)
		}
	})
}

// Live and test purchases of one account at once, through two services:
// each pool runs dry on its own, never below zero, each equal to its own
// ledger; and the live pool pays for exactly the live purchases.
func TestTestModeConcurrentWithLive(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const liveAffordable, testAffordable = 37, 29
	admin, nodes := twoNodes(t, func(c *config.Config) { c.TestBalance = testAffordable * 500 })
	acct := billingtest.NewAccount(t, admin, billingtest.AccountOpts{Credits: liveAffordable * 500})
	keys := make([]tenancy.Principal, 16)
	for i := range keys {
		if i%2 == 0 {
			keys[i] = billingtest.Principal(acct, acct.CustomerKey(t, admin, "live"))
		} else {
			keys[i] = billingtest.Principal(acct, acct.TestKey(t, admin, "test"))
		}
	}
	videos := billingtest.Videos(t, admin, 13, "easy") // 5.00 each

	var wg sync.WaitGroup
	var mu sync.Mutex
	ok := map[bool]int{}
	refused := map[bool]int{}
	for i := 0; i < 200; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k := keys[i%len(keys)]
			res, err := nodes[i%2].Purchase(ctx, k, billing.PurchaseRequest{VideoIDs: []uuid.UUID{videos[i/len(keys)]}})
			mu.Lock()
			defer mu.Unlock()
			switch code(err) {
			case "":
				if res.Livemode == k.Test {
					t.Errorf("purchase %d: livemode %v for a test=%v key", i, res.Livemode, k.Test)
				}
				ok[k.Test]++
			case apperr.InsufficientCredits:
				refused[k.Test]++
			default:
				t.Errorf("purchase %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	if ok[false] != liveAffordable || ok[true] != testAffordable || ok[false]+ok[true]+refused[false]+refused[true] != 200 {
		t.Fatalf("live %d bought, %d refused; test %d bought, %d refused; want %d live and %d test bought",
			ok[false], refused[false], ok[true], refused[true], liveAffordable, testAffordable)
	}
	if b := checkInvariants(t, admin, acct.ID); b != 0 {
		t.Fatalf("live pool %s, want 0", b)
	}
	if b := checkTestInvariants(t, admin, acct.ID); b != 0 {
		t.Fatalf("test balance %s, want 0", b)
	}
	var liveBought, testBought int
	if err := admin.QueryRow(ctx, `SELECT count(*) FILTER (WHERE livemode), count(*) FILTER (WHERE NOT livemode)
		FROM purchases WHERE account_id = $1`, acct.ID).Scan(&liveBought, &testBought); err != nil {
		t.Fatal(err)
	}
	if liveBought != liveAffordable || testBought != testAffordable {
		t.Fatalf("rows: %d live, %d test", liveBought, testBought)
	}
}
