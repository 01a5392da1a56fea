package billing_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"broll/billing"
	"broll/billing/billingtest"
	"broll/internal/apperr"
	"broll/internal/config"
	"broll/internal/database"
	"broll/internal/money"
	"broll/internal/testkit"
	"broll/tenancy"
	"broll/wiring"
	"broll/wiring/wiringtest"
)

// newService is the billing service the composition root builds for an
// API node over pool (download links signed for http://api.test), with
// the configuration changed by configure.
func newService(t testing.TB, pool *pgxpool.Pool, configure ...func(*config.Config)) *billing.Service {
	t.Helper()
	cfg := config.Defaults()
	cfg.SigningKey, cfg.PublicURL = "0123456789abcdef0123456789abcdef", "http://api.test"
	for _, c := range configure {
		c(&cfg)
	}
	return wiringtest.Open(t, cfg, wiring.Options{Parts: wiring.Secrets, Pool: pool}).Billing
}

// setup is how most tests start: a fresh database, a context and a billing
// service on it.
func setup(t *testing.T) (*pgxpool.Pool, context.Context, *billing.Service) {
	t.Helper()
	pool, _ := testkit.NewPool(t)
	return pool, context.Background(), newService(t, pool)
}

// mustBuy buys ids for p and stops the test if the purchase fails.
func mustBuy(ctx context.Context, t *testing.T, svc *billing.Service, p tenancy.Principal, ids []uuid.UUID) {
	t.Helper()
	if _, err := svc.Purchase(ctx, p, billing.PurchaseRequest{VideoIDs: ids}); err != nil {
		t.Fatal(err)
	}
}

// twoNodes opens a fresh database and two billing services on it, each
// with its own pool, as two API nodes would be (with the configuration
// changed by configure), and a pool for the test.
func twoNodes(t *testing.T, configure ...func(*config.Config)) (*pgxpool.Pool, []*billing.Service) {
	t.Helper()
	url := testkit.NewDatabase(t)
	pools := make([]*pgxpool.Pool, 3)
	for i := range pools {
		p, err := database.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Close)
		pools[i] = p
	}
	return pools[2], []*billing.Service{newService(t, pools[0], configure...), newService(t, pools[1], configure...)}
}

// checkInvariants: the live balance is never negative and equals the live
// ledger (checkTestInvariants holds the test balance to the test ledger).
func checkInvariants(t *testing.T, pool *pgxpool.Pool, account uuid.UUID) money.Cents {
	t.Helper()
	var balance, ledger, charged, prices int64
	err := pool.QueryRow(context.Background(), `
		SELECT a.balance_cents, (SELECT coalesce(sum(amount_cents), 0) FROM ledger l WHERE l.account_id = a.id AND l.livemode),
		       (SELECT coalesce(-sum(amount_cents), 0) FROM ledger l WHERE l.account_id = a.id AND l.livemode AND l.kind = 'purchase'),
		       (SELECT coalesce(sum(price_cents), 0) FROM purchases p WHERE p.account_id = a.id AND p.livemode)
		FROM accounts a WHERE a.id = $1`, account).Scan(&balance, &ledger, &charged, &prices)
	if err != nil {
		t.Fatal(err)
	}
	if balance < 0 || balance != ledger {
		t.Fatalf("invariant broken: balance %d, ledger sum %d", balance, ledger)
	}
	// Every purchase on record was charged, once: a refused one leaves no
	// row behind.
	if charged != prices {
		t.Fatalf("invariant broken: purchases charged %d in the ledger, purchases on record cost %d", charged, prices)
	}
	return money.Cents(balance)
}

func code(err error) apperr.Code {
	if err == nil {
		return ""
	}
	return apperr.CodeOf(err)
}

func TestPurchaseRules(t *testing.T) {
	t.Parallel()
	pool, ctx, svc := setup(t)
	acct := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: 10000})
	alice := billingtest.Principal(acct, acct.CustomerKey(t, pool, "alice"))
	bob := billingtest.Principal(acct, acct.CustomerKey(t, pool, "bob"))
	easy := billingtest.Videos(t, pool, 3, "easy")
	hard := billingtest.Videos(t, pool, 1, "hard")

	// Dry run quotes without charging.
	q, err := svc.Purchase(ctx, alice, billing.PurchaseRequest{VideoIDs: []uuid.UUID{easy[0], hard[0]}, DryRun: true})
	if err != nil || q.TotalCharged != 3000 || !q.DryRun || q.Balance != 10000 {
		t.Fatalf("dry run: %+v %v", q, err)
	}
	// Wrong expected total: 409, nothing charged.
	wrong := money.Cents(2999)
	_, err = svc.Purchase(ctx, alice, billing.PurchaseRequest{VideoIDs: []uuid.UUID{easy[0], hard[0]}, ExpectedTotal: &wrong})
	if code(err) != apperr.PriceChanged {
		t.Fatalf("expected_total mismatch: %v", err)
	}
	right := money.Cents(3000)
	r, err := svc.Purchase(ctx, alice, billing.PurchaseRequest{VideoIDs: []uuid.UUID{easy[0], hard[0], easy[0]}, ExpectedTotal: &right})
	if err != nil || r.TotalCharged != 3000 || r.Balance != 7000 || len(r.Purchases) != 2 {
		t.Fatalf("purchase: %+v %v", r, err)
	}
	if r.Purchases[0].VideoID != easy[0] || r.Purchases[0].PricePaid != 500 || r.Purchases[0].Download.URL == "" || r.Purchases[0].AlreadyOwned {
		t.Fatalf("purchase line: %+v", r.Purchases[0])
	}

	// Repeat: same purchase, fresh link, no charge.
	again, err := svc.Purchase(ctx, alice, billing.PurchaseRequest{VideoIDs: []uuid.UUID{easy[0]}})
	if err != nil || again.TotalCharged != 0 || again.Balance != 7000 || !again.Purchases[0].AlreadyOwned ||
		again.Purchases[0].PurchaseID != r.Purchases[0].PurchaseID {
		t.Fatalf("repeat: %+v %v", again, err)
	}
	// Another key of the same account pays again.
	other, err := svc.Purchase(ctx, bob, billing.PurchaseRequest{VideoIDs: []uuid.UUID{easy[0]}})
	if err != nil || other.TotalCharged != 500 || other.Balance != 6500 || other.Purchases[0].PurchaseID == r.Purchases[0].PurchaseID {
		t.Fatalf("other key: %+v %v", other, err)
	}
	// Price changes never alter past purchases.
	if _, err := pool.Exec(ctx, `UPDATE tiers SET price_cents = 900 WHERE name = 'easy'`); err != nil {
		t.Fatal(err)
	}
	again, _ = svc.Purchase(ctx, alice, billing.PurchaseRequest{VideoIDs: []uuid.UUID{easy[0]}})
	if again.Purchases[0].PricePaid != 500 {
		t.Fatalf("past price changed: %+v", again.Purchases[0])
	}

	// Unknown ids: 404 naming them, nothing charged even for the known ones.
	unknown := uuid.New()
	_, err = svc.Purchase(ctx, alice, billing.PurchaseRequest{VideoIDs: []uuid.UUID{easy[1], unknown}})
	ae, _ := apperr.As(err)
	if code(err) != apperr.NotFound || ae.Fields["unknown_video_ids"].([]string)[0] != unknown.String() {
		t.Fatalf("unknown id: %v", err)
	}
	// Bad sizes.
	if _, err := svc.Purchase(ctx, alice, billing.PurchaseRequest{}); code(err) != apperr.Invalid {
		t.Fatalf("empty: %v", err)
	}
	many := make([]uuid.UUID, 51)
	for i := range many {
		many[i] = uuid.New()
	}
	if _, err := svc.Purchase(ctx, alice, billing.PurchaseRequest{VideoIDs: many}); code(err) != apperr.Invalid {
		t.Fatalf("51 ids: %v", err)
	}
	// Insufficient credits: 402 with required/available, all or nothing.
	if _, err := pool.Exec(ctx, `UPDATE tiers SET price_cents = 600000 WHERE name = 'hard'`); err != nil {
		t.Fatal(err)
	}
	more := billingtest.Videos(t, pool, 1, "hard")
	_, err = svc.Purchase(ctx, alice, billing.PurchaseRequest{VideoIDs: []uuid.UUID{easy[2], more[0]}})
	ae, _ = apperr.As(err)
	if code(err) != apperr.InsufficientCredits || ae.Fields["required"] != money.Cents(600900) || ae.Fields["available"] != money.Cents(6500) {
		t.Fatalf("402: %v %+v", err, ae)
	}
	var n int
	_ = pool.QueryRow(ctx, `SELECT count(*) FROM purchases WHERE video_id = $1`, easy[2]).Scan(&n)
	if n != 0 {
		t.Fatal("a refused purchase left a row")
	}
	if checkInvariants(t, pool, acct.ID) != 6500 {
		t.Fatal("balance changed by refused purchases")
	}
}

// TestSharedPoolUnderConcurrency: concurrent purchases from many customer
// keys of one account, through one API node or two (each batching on its
// own), spend a pool that pays for exactly `affordable` of them.
func TestSharedPoolUnderConcurrency(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                                  string
		nodes, keys, videos, affordable, buys int
	}{
		{"one node, 20 keys", 1, 20, 10, 37, 200},
		{"two nodes share one pool", 2, 16, 20, 53, 240},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pool, _ := testkit.NewPool(t)
			ctx := context.Background()
			var nodes []*billing.Service
			for range tc.nodes {
				nodes = append(nodes, newService(t, pool))
			}
			acct := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: money.Cents(tc.affordable * 500)})
			var keys []tenancy.Principal
			for range tc.keys {
				keys = append(keys, billingtest.Principal(acct, acct.CustomerKey(t, pool, "k")))
			}
			videos := billingtest.Videos(t, pool, tc.videos, "easy")
			var wg sync.WaitGroup
			var mu sync.Mutex
			ok, refused := 0, 0
			for i := 0; i < tc.buys; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, err := nodes[i%tc.nodes].Purchase(ctx, keys[i%tc.keys], billing.PurchaseRequest{VideoIDs: []uuid.UUID{videos[i/tc.keys]}})
					mu.Lock()
					defer mu.Unlock()
					switch code(err) {
					case "":
						ok++
					case apperr.InsufficientCredits:
						refused++
					default:
						t.Errorf("purchase %d: %v", i, err)
					}
				}()
			}
			wg.Wait()
			if ok != tc.affordable || refused != tc.buys-tc.affordable {
				t.Fatalf("%d succeeded, %d refused; want %d and %d", ok, refused, tc.affordable, tc.buys-tc.affordable)
			}
			if b := checkInvariants(t, pool, acct.ID); b != 0 {
				t.Fatalf("balance %s, want 0", b)
			}
		})
	}
}

// TestSameKeySameVideoConcurrently: 50 parallel purchases of one video by
// one key are charged once and all return the same purchase.
func TestSameKeySameVideoConcurrently(t *testing.T) {
	t.Parallel()
	pool, ctx, svc := setup(t)
	acct := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: 100000})
	key := billingtest.Principal(acct, acct.CustomerKey(t, pool, "k"))
	video := billingtest.Videos(t, pool, 1, "hard")[0]
	var wg sync.WaitGroup
	ids := make(chan uuid.UUID, 50)
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := svc.Purchase(ctx, key, billing.PurchaseRequest{VideoIDs: []uuid.UUID{video}})
			if err != nil {
				t.Errorf("purchase: %v", err)
				return
			}
			ids <- r.Purchases[0].PurchaseID
		}()
	}
	wg.Wait()
	close(ids)
	seen := map[uuid.UUID]bool{}
	for id := range ids {
		seen[id] = true
	}
	if len(seen) != 1 {
		t.Fatalf("%d distinct purchases", len(seen))
	}
	if b := checkInvariants(t, pool, acct.ID); b != 100000-2500 {
		t.Fatalf("balance %s, want charged once", b)
	}
}

// TestRefusedPurchaseDeletesReadByIndex: the purchase statement deletes the
// rows of a job refused under the account lock, and each delete checks
// every table whose foreign key names purchases. Each of those keys leads
// an index, and the ledger's check reads that index, not the ledger.
func TestRefusedPurchaseDeletesReadByIndex(t *testing.T) {
	t.Parallel()
	pool, _ := testkit.NewPool(t)
	ctx := context.Background()
	unindexed, err := database.Select(ctx, pool, pgx.RowTo[string], `
		SELECT c.conrelid::regclass::text || '.' || a.attname
		FROM pg_constraint c
		JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
		WHERE c.contype = 'f' AND c.confrelid = 'purchases'::regclass
		  AND NOT EXISTS (SELECT 1 FROM pg_index i
		                  WHERE i.indrelid = c.conrelid AND i.indkey[0] = c.conkey[1] AND i.indisvalid)`)
	if err != nil {
		t.Fatal(err)
	}
	if len(unindexed) > 0 {
		t.Fatalf("foreign keys to purchases without an index: %v", unindexed)
	}
	// The ledger's index is partial (purchase rows only): the check's
	// equality on a parameter must still be able to use it.
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SET enable_seqscan = off`); err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = conn.Exec(ctx, `RESET enable_seqscan`) }()
	lines, err := database.Select(ctx, conn, pgx.RowTo[string], `EXPLAIN (COSTS OFF) SELECT 1 FROM ONLY ledger x
		WHERE purchase_id = '6f1c2f4e-5b1a-4c36-9d6a-2a0f3b9f8e11' FOR KEY SHARE OF x`)
	if err != nil {
		t.Fatal(err)
	}
	if plan := strings.Join(lines, "\n"); !strings.Contains(plan, "ledger_purchase_idx") {
		t.Fatalf("the ledger's foreign-key check does not read ledger_purchase_idx: %s", plan)
	}
}
