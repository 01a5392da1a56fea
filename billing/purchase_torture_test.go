package billing_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"broll/billing"
	"broll/billing/billingtest"
	"broll/internal/apperr"
	"broll/internal/money"
	"broll/tenancy"
)

// tortureRequest is one purchase of the torture run and what came of it.
type tortureRequest struct {
	key      tenancy.Principal
	videos   []uuid.UUID
	expected *money.Cents
	unknown  bool // names a video that does not exist

	res billing.PurchaseResult
	err error
}

// TestPurchaseTorture: 200 purchases from 72 customer keys of one account
// through two billing services (two API nodes, each with its own pool) on
// one database, while the pool runs dry, top-ups arrive, keys buy
// overlapping videos at once, some requests name unknown videos or a wrong
// expected_total, and a batch's connection is killed while it waits for the
// account row. The money must add up to the cent, every refusal must have
// written nothing, and every answer must be one the request deserves.
func TestPurchaseTorture(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	admin, nodes := twoNodes(t)

	const initial, topup, topups = 50_000, 5_000, 10
	acct := billingtest.NewAccount(t, admin, billingtest.AccountOpts{Credits: initial})
	keys := make([]tenancy.Principal, 72)
	for i := range keys {
		keys[i] = billingtest.Principal(acct, acct.CustomerKey(t, admin, "k"))
	}
	videos := append(billingtest.Videos(t, admin, 60, "easy"), billingtest.Videos(t, admin, 20, "hard")...)

	// Requests i, i+72 and i+144 share a key and their first video, and the
	// first two of them run at once: same-key overlaps.
	reqs := make([]*tortureRequest, 200)
	oneCent := money.Cents(1) // no purchase costs one cent: always wrong
	for i := range reqs {
		r := &tortureRequest{key: keys[i%len(keys)],
			videos: []uuid.UUID{videos[(i%len(keys))%len(videos)], videos[(i*7+i/len(keys))%len(videos)]}}
		switch {
		case i%17 == 5:
			r.videos, r.unknown = append(r.videos, uuid.New()), true
		case i%13 == 3:
			r.expected = &oneCent
		}
		reqs[i] = r
	}

	// Poll the pool throughout: it is never negative.
	done := make(chan struct{})
	var polls, negative atomic.Int64
	var pollWG sync.WaitGroup
	pollWG.Add(1)
	go func() {
		defer pollWG.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			var b int64
			if err := admin.QueryRow(ctx, `SELECT balance_cents FROM accounts WHERE id = $1`, acct.ID).Scan(&b); err == nil {
				polls.Add(1)
				if b < 0 {
					negative.Add(1)
				}
			}
		}
	}()

	var wg sync.WaitGroup
	var toppedUp atomic.Int64
	launch := func(from, to int) {
		for i := from; i < to; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := reqs[i]
				r.res, r.err = nodes[i%2].Purchase(ctx, r.key, billing.PurchaseRequest{VideoIDs: r.videos, ExpectedTotal: r.expected})
			}()
			if i%20 == 0 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if _, err := nodes[i%2].TopUp(ctx, acct.ID, topup, "torture top-up"); err != nil {
						t.Errorf("top-up: %v", err)
						return
					}
					toppedUp.Add(topup)
				}()
			}
		}
	}

	launch(0, 100)
	// Hold the account row so that the next batches wait for it, kill one
	// of them while it waits, then let the rest through.
	hold, err := admin.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hold.Exec(ctx, `SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE`, acct.ID); err != nil {
		t.Fatal(err)
	}
	launch(100, 150)
	killed := killWaitingBatch(t, admin)
	if err := hold.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	launch(150, 200)
	wg.Wait()
	close(done)
	pollWG.Wait()
	if toppedUp.Load() != topup*topups {
		t.Fatalf("topped up %d, want %d", toppedUp.Load(), topup*topups)
	}

	// Every answer is one the request deserves.
	var charged money.Cents
	var ok, poor, unavailable int
	reported := map[[2]uuid.UUID]uuid.UUID{} // (key, video) -> purchase
	for i, r := range reqs {
		switch c := code(r.err); {
		case r.err == nil:
			ok++
			charged += r.res.TotalCharged
			if distinct := len(map[uuid.UUID]bool{r.videos[0]: true, r.videos[1]: true}); len(r.res.Purchases) != distinct {
				t.Errorf("request %d: %d lines for %d videos", i, len(r.res.Purchases), distinct)
			}
			for _, pv := range r.res.Purchases {
				k := [2]uuid.UUID{r.key.KeyID, pv.VideoID}
				if prev, seen := reported[k]; seen && prev != pv.PurchaseID {
					t.Errorf("request %d: two purchases of one video by one key", i)
				}
				reported[k] = pv.PurchaseID
			}
			if r.unknown || r.expected != nil {
				t.Errorf("request %d should have been refused", i)
			}
		case r.unknown:
			if c != apperr.NotFound {
				t.Errorf("request %d (unknown id): %v", i, r.err)
			}
		case r.expected != nil:
			if c != apperr.PriceChanged {
				t.Errorf("request %d (wrong expected_total): %v", i, r.err)
			}
		case c == apperr.InsufficientCredits:
			poor++
			ae, _ := apperr.As(r.err)
			if ae.Fields["required"].(money.Cents) <= ae.Fields["available"].(money.Cents) {
				t.Errorf("request %d: 402 although %v", i, ae.Fields)
			}
		case c == apperr.Unavailable:
			unavailable++ // the killed batch's, when its retries failed too
		default:
			t.Errorf("request %d: unexpected %v", i, r.err)
		}
	}
	if ok == 0 || poor == 0 {
		t.Fatalf("%d bought, %d refused for credits: the pool should have run dry mid-run", ok, poor)
	}
	t.Logf("%d bought, %d refused for credits, %d unavailable; %d batch connection(s) killed; %d polls",
		ok, poor, unavailable, killed, polls.Load())

	// The money adds up to the cent.
	if negative.Load() > 0 {
		t.Fatalf("the balance was negative on %d polls", negative.Load())
	}
	var balance, ledgerCharges, purchases, purchaseCents, ledgerRows, matched int64
	err = admin.QueryRow(ctx, `
		SELECT a.balance_cents,
		       (SELECT coalesce(-sum(amount_cents), 0) FROM ledger WHERE account_id = a.id AND kind = 'purchase'),
		       (SELECT count(*) FROM purchases WHERE account_id = a.id AND price_cents > 0),
		       (SELECT coalesce(sum(price_cents), 0) FROM purchases WHERE account_id = a.id),
		       (SELECT count(*) FROM ledger WHERE account_id = a.id AND kind = 'purchase'),
		       (SELECT count(DISTINCT l.purchase_id) FROM ledger l JOIN purchases p ON p.id = l.purchase_id
		         AND l.amount_cents = -p.price_cents WHERE l.account_id = a.id)
		FROM accounts a WHERE a.id = $1`, acct.ID).
		Scan(&balance, &ledgerCharges, &purchases, &purchaseCents, &ledgerRows, &matched)
	if err != nil {
		t.Fatal(err)
	}
	if want := initial + topup*topups - ledgerCharges; balance != want {
		t.Fatalf("balance %d, want initial + top-ups - ledger charges = %d", balance, want)
	}
	if int64(charged) != ledgerCharges || ledgerCharges != purchaseCents {
		t.Fatalf("responses charged %d, the ledger %d, the purchases cost %d", charged, ledgerCharges, purchaseCents)
	}
	if purchases != ledgerRows || ledgerRows != matched {
		t.Fatalf("%d purchases, %d ledger rows, %d matching pairs: not 1:1", purchases, ledgerRows, matched)
	}
	if got := checkInvariants(t, admin, acct.ID); int64(got) != balance {
		t.Fatalf("balance moved after the run: %d", got)
	}

	// Refused requests wrote nothing: the purchases in the database are
	// exactly the ones the successful answers reported.
	rows, err := admin.Query(ctx, `SELECT api_key_id, video_id, id FROM purchases WHERE account_id = $1`, acct.ID)
	if err != nil {
		t.Fatal(err)
	}
	stored := map[[2]uuid.UUID]uuid.UUID{}
	for rows.Next() {
		var k, v, id uuid.UUID
		if err := rows.Scan(&k, &v, &id); err != nil {
			t.Fatal(err)
		}
		stored[[2]uuid.UUID{k, v}] = id
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(stored) != len(reported) {
		t.Fatalf("%d purchases stored, %d reported", len(stored), len(reported))
	}
	for k, id := range reported {
		if stored[k] != id {
			t.Fatalf("reported purchase %s of %v is not stored as such", id, k)
		}
	}
}

// killWaitingBatch waits until a purchase batch waits for the account row,
// terminates its connection and returns how many it killed (1).
func killWaitingBatch(t *testing.T, admin *pgxpool.Pool) int {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		var killed int
		err := admin.QueryRow(ctx, `
			SELECT count(*) FROM (
				SELECT pg_terminate_backend(pid) FROM pg_stat_activity
				WHERE datname = current_database() AND pid <> pg_backend_pid()
				  AND query LIKE '%broll_purchase_batch%' AND wait_event_type = 'Lock'
				LIMIT 1) k`).Scan(&killed)
		if err != nil {
			t.Fatal(err)
		}
		if killed > 0 {
			return killed
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("no purchase batch came to wait for the account row")
	return 0
}
