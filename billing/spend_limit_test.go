package billing_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"broll/billing"
	"broll/billing/billingtest"
	"broll/internal/apperr"
	"broll/internal/config"
	"broll/internal/money"
	"broll/internal/testkit"
	"broll/tenancy"
	"broll/wiring"
	"broll/wiring/wiringtest"
)

// TestSpendLimitConcurrency: 32 customer keys with a $50 monthly limit
// each make 400 purchases of $5 to $25 at once through two billing services
// (two API nodes) on a large pool. No key's charges in the month pass $50,
// every refusal is 402 spend_limit_exceeded with numbers that justify it and
// nothing charged, and the pool, the ledger, the purchases and the keys'
// counters agree to the cent.
func TestSpendLimitConcurrency(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	admin, nodes := twoNodes(t)
	const initial = money.Cents(10_000_000)
	const limit = money.Cents(5000)
	acct := billingtest.NewAccount(t, admin, billingtest.AccountOpts{Credits: initial})
	ten := wiringtest.Over(t, admin).Tenancy
	keys := make([]tenancy.Principal, 32)
	for i := range keys {
		k, err := ten.CreateCustomerKeyWith(ctx, acct.Root, tenancy.CustomerKeySpec{Label: "limited",
			SpendLimit: &tenancy.SpendLimit{Amount: limit, Period: tenancy.SpendMonth}})
		if err != nil {
			t.Fatal(err)
		}
		keys[i] = billingtest.Principal(acct, k)
	}
	easy, medium, hard := billingtest.Videos(t, admin, 400, "easy"), billingtest.Videos(t, admin, 400, "medium"),
		billingtest.Videos(t, admin, 400, "hard")
	// $5, $10, $15, $20 or $25: one to three clips, none bought twice.
	baskets := [][]uuid.UUID{}
	for i := 0; i < 400; i++ {
		switch i % 5 {
		case 0:
			baskets = append(baskets, []uuid.UUID{easy[i]})
		case 1:
			baskets = append(baskets, []uuid.UUID{medium[i]})
		case 2:
			baskets = append(baskets, []uuid.UUID{easy[i], medium[i]})
		case 3:
			baskets = append(baskets, []uuid.UUID{medium[i], medium[(i+200)%400]})
		case 4:
			baskets = append(baskets, []uuid.UUID{hard[i]})
		}
	}

	results := make([]billing.PurchaseResult, 400)
	errs := make([]error, 400)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range baskets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			results[i], errs[i] = nodes[i%2].Purchase(ctx, keys[i%len(keys)], billing.PurchaseRequest{VideoIDs: baskets[i]})
		}()
	}
	close(start)
	wg.Wait()

	charged := map[uuid.UUID]money.Cents{}
	var bought, refused int
	for i, err := range errs {
		key := keys[i%len(keys)].KeyID
		if err == nil {
			bought++
			charged[key] += results[i].TotalCharged
			continue
		}
		ae, ok := apperr.As(err)
		if !ok || ae.Code != apperr.SpendLimitExceeded {
			t.Fatalf("purchase %d: %v", i, err)
		}
		refused++
		lim, spent, required := ae.Fields["limit"].(money.Cents), ae.Fields["spent"].(money.Cents), ae.Fields["required"].(money.Cents)
		if lim != limit || spent+required <= limit {
			t.Errorf("purchase %d refused with limit %s, spent %s, required %s", i, lim, spent, required)
		}
		if resets, _ := ae.Fields["period_resets_at"].(time.Time); resets.Day() != 1 || !resets.After(time.Now()) {
			t.Errorf("purchase %d: period_resets_at %v is not the next month's start", i, ae.Fields["period_resets_at"])
		}
	}
	if bought == 0 || refused == 0 {
		t.Fatalf("%d bought, %d refused: the limits should have bitten", bought, refused)
	}

	// What the database holds agrees with the answers, per key.
	rows, err := admin.Query(ctx, `
		SELECT k.id, coalesce(sum(p.price_cents), 0), coalesce(s.month_cents, 0)
		FROM api_keys k LEFT JOIN purchases p ON p.api_key_id = k.id LEFT JOIN key_spend s ON s.api_key_id = k.id
		WHERE k.parent_id = $1 GROUP BY k.id, s.month_cents`, acct.Root.KeyID)
	if err != nil {
		t.Fatal(err)
	}
	var total money.Cents
	for rows.Next() {
		var id uuid.UUID
		var sum, counter money.Cents
		if err := rows.Scan(&id, &sum, &counter); err != nil {
			t.Fatal(err)
		}
		if sum > limit {
			t.Errorf("key %s was charged %s, over its %s limit", id, sum, limit)
		}
		if sum != charged[id] || counter != sum {
			t.Errorf("key %s: purchases %s, answers %s, counter %s", id, sum, charged[id], counter)
		}
		total += sum
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if balance := checkInvariants(t, admin, acct.ID); balance != initial-total {
		t.Fatalf("pool %s, want %s less %s charged", balance, initial, total)
	}
	t.Logf("%d bought, %d refused by spend limits", bought, refused)
}

// TestSpendLimitPeriodsAndChanges: a limit counts only its period, a key's
// spending before a limit is set counts against it, raising a limit lets
// the key buy again, and clearing it removes the check.
func TestSpendLimitPeriodsAndChanges(t *testing.T) {
	t.Parallel()
	pool, ctx, svc := setup(t)
	rds := testkit.Redis(t)
	cfg := config.Defaults()
	cfg.RedisPrefix = rds.Prefix
	keys := wiringtest.Open(t, cfg, wiring.Options{Parts: wiring.Redis, Pool: pool, Redis: rds.Client}).KeyChanges
	acct := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: 100_000})
	ik := acct.CustomerKey(t, pool, "later limited")
	key := billingtest.Principal(acct, ik)
	hard := billingtest.Videos(t, pool, 4, "hard")
	mustBuy(ctx, t, svc, key, hard[:1])
	// A purchase dated last month counts for 'total' but not for 'month'
	// or 'day': the counters are moved back as if it were.
	if _, err := pool.Exec(ctx, `UPDATE key_spend SET day_start = day_start - 40, month_start = (month_start - interval '1 month')::date
		WHERE api_key_id = $1`, ik.ID); err != nil {
		t.Fatal(err)
	}
	set := func(l *tenancy.SpendLimit) tenancy.Key {
		k, err := keys.Update(ctx, tenancy.CustomerKeysOf(acct.Root), ik.ID, tenancy.KeyUpdate{SpendLimitSet: true, SpendLimit: l})
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	buy := func(v uuid.UUID) error {
		_, err := svc.Purchase(ctx, key, billing.PurchaseRequest{VideoIDs: []uuid.UUID{v}})
		return err
	}
	k := set(&tenancy.SpendLimit{Amount: 3000, Period: tenancy.SpendTotal})
	if k.Spent.Amount != 2500 || k.Spent.ResetsAt != nil {
		t.Fatalf("total spent %+v, want 25.00 and no reset", k.Spent)
	}
	if err := buy(hard[1]); apperr.CodeOf(err) != apperr.SpendLimitExceeded {
		t.Fatalf("total limit: %v", err)
	}
	k = set(&tenancy.SpendLimit{Amount: 3000, Period: tenancy.SpendMonth})
	if k.Spent.Amount != 0 || k.Spent.ResetsAt == nil || k.Spent.ResetsAt.Day() != 1 {
		t.Fatalf("month spent %+v, want 0 this month", k.Spent)
	}
	if err := buy(hard[1]); err != nil {
		t.Fatalf("month limit with nothing spent this month: %v", err)
	}
	k = set(&tenancy.SpendLimit{Amount: 4000, Period: tenancy.SpendDay})
	if k.Spent.Amount != 2500 || k.Spent.ResetsAt.Sub(*k.Spent.PeriodStart) != 24*time.Hour {
		t.Fatalf("day spent %+v, want 25.00 over 24 h", k.Spent)
	}
	if err := buy(hard[2]); apperr.CodeOf(err) != apperr.SpendLimitExceeded {
		t.Fatalf("day limit: %v", err)
	}
	set(nil)
	if err := buy(hard[2]); err != nil {
		t.Fatalf("no limit: %v", err)
	}
	// A key of another root cannot be changed through this one.
	other := billingtest.NewAccount(t, pool, billingtest.AccountOpts{})
	if _, err := keys.Update(ctx, tenancy.CustomerKeysOf(other.Root), ik.ID, tenancy.KeyUpdate{SpendLimitSet: true}); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("another account's PATCH: %v", err)
	}
}
