package collections_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"broll/billing/billingtest"
	"broll/collections"
	"broll/internal/apperr"
	"broll/internal/testkit"
	"broll/tenancy"
	"broll/wiring/wiringtest"
)

func newService(t *testing.T) (*collections.Service, *pgxpool.Pool) {
	t.Helper()
	pool, _ := testkit.NewPool(t)
	return wiringtest.Over(t, pool).Collections, pool
}

func codeOf(t *testing.T, err error, want apperr.Code) *apperr.Error {
	t.Helper()
	ae, ok := apperr.As(err)
	if !ok || ae.Code != want {
		t.Fatalf("error %v, want %s", err, want)
	}
	return ae
}

func itemIDs(page collections.ItemsPage) []uuid.UUID {
	out := make([]uuid.UUID, len(page.Items))
	for i, it := range page.Items {
		out[i] = it.Video.ID
	}
	return out
}

// TestItemsKeepTheOrderAdded: clips come back in the order they were
// added, across pages; adding a clip again (or twice in one add) leaves
// it where it is; removing one closes the gap; an unknown clip refuses
// the whole add, naming it.
func TestItemsKeepTheOrderAdded(t *testing.T) {
	t.Parallel()
	svc, pool := newService(t)
	ctx := context.Background()
	a := billingtest.NewAccount(t, pool, billingtest.AccountOpts{})
	v := billingtest.Videos(t, pool, 7, "easy")
	c, err := svc.Create(ctx, a.Root, collections.CreateRequest{Name: "  Beach  "})
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "Beach" || c.ItemCount != 0 || !c.Livemode || c.Description != nil {
		t.Fatalf("created %+v", c)
	}
	if c, err = svc.AddItems(ctx, a.Root, c.ID, []uuid.UUID{v[3], v[1], v[3], v[5]}); err != nil || c.ItemCount != 3 {
		t.Fatalf("add: %+v %v", c, err)
	}
	if c, err = svc.AddItems(ctx, a.Root, c.ID, []uuid.UUID{v[1], v[0], v[6], v[2]}); err != nil || c.ItemCount != 6 {
		t.Fatalf("add again: %+v %v", c, err)
	}
	want := []uuid.UUID{v[3], v[1], v[5], v[0], v[6], v[2]}
	var got []uuid.UUID
	cursor := ""
	for pages := 0; ; pages++ {
		_, page, err := svc.Items(ctx, a.Root, c.ID, collections.ItemsQuery{Limit: 4, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, itemIDs(page)...)
		if !page.HasMore {
			if pages != 1 {
				t.Fatalf("%d pages, want 2", pages+1)
			}
			break
		}
		cursor = page.NextCursor
	}
	if !slices.Equal(got, want) {
		t.Fatalf("items %v, want %v", got, want)
	}

	unknown := uuid.New()
	_, err = svc.AddItems(ctx, a.Root, c.ID, []uuid.UUID{v[4], unknown})
	if ae := codeOf(t, err, apperr.NotFound); !slices.Equal(ae.Fields["unknown_video_ids"].([]string), []string{unknown.String()}) {
		t.Fatalf("unknown ids %v", ae.Fields)
	}
	if c, err = svc.RemoveItem(ctx, a.Root, c.ID, v[1]); err != nil || c.ItemCount != 5 {
		t.Fatalf("remove: %+v %v", c, err)
	}
	if c, err = svc.RemoveItem(ctx, a.Root, c.ID, v[1]); err != nil || c.ItemCount != 5 {
		t.Fatalf("remove again: %+v %v", c, err)
	}
	if c, err = svc.AddItems(ctx, a.Root, c.ID, []uuid.UUID{v[1]}); err != nil || c.ItemCount != 6 {
		t.Fatalf("add back: %+v %v", c, err)
	}
	_, page, err := svc.Items(ctx, a.Root, c.ID, collections.ItemsQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := itemIDs(page), []uuid.UUID{v[3], v[5], v[0], v[6], v[2], v[1]}; !slices.Equal(got, want) {
		t.Fatalf("after remove and add back %v, want %v", got, want)
	}
}

// TestItemCapHoldsUnderConcurrentAdds: a collection 10 clips short of
// the cap gets 50 adds at once, each of another clip: exactly 10 pass,
// the others are limit_reached, and the count is the rows.
func TestItemCapHoldsUnderConcurrentAdds(t *testing.T) {
	t.Parallel()
	svc, pool := newService(t)
	ctx := context.Background()
	a := billingtest.NewAccount(t, pool, billingtest.AccountOpts{})
	const short, racers = 10, 50
	v := billingtest.Videos(t, pool, collections.MaxItemsPerCollection-short+racers, "easy")
	c, err := svc.Create(ctx, a.Root, collections.CreateRequest{Name: "full"})
	if err != nil {
		t.Fatal(err)
	}
	fill := v[:collections.MaxItemsPerCollection-short]
	for len(fill) > 0 {
		n := min(len(fill), collections.MaxItemsPerAdd)
		if _, err := svc.AddItems(ctx, a.Root, c.ID, fill[:n]); err != nil {
			t.Fatal(err)
		}
		fill = fill[n:]
	}
	var wg sync.WaitGroup
	errs := make([]error, racers)
	for i := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = svc.AddItems(ctx, a.Root, c.ID, []uuid.UUID{v[collections.MaxItemsPerCollection-short+i]})
		}()
	}
	wg.Wait()
	passed := 0
	for _, err := range errs {
		if err == nil {
			passed++
		} else {
			codeOf(t, err, apperr.LimitReached)
		}
	}
	var rows, count int
	if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM collection_items WHERE collection_id = $1),
		(SELECT item_count FROM collections WHERE id = $1)`, c.ID).Scan(&rows, &count); err != nil {
		t.Fatal(err)
	}
	if passed != short || rows != collections.MaxItemsPerCollection || count != rows {
		t.Fatalf("%d adds passed, %d rows, count %d; want %d, %d", passed, rows, count, short, collections.MaxItemsPerCollection)
	}
}

// TestCollectionCapHoldsUnderConcurrentCreates: a key 10 collections
// short of the cap creates 50 at once: 10 are made, and deleting one
// makes room for one more.
func TestCollectionCapHoldsUnderConcurrentCreates(t *testing.T) {
	t.Parallel()
	svc, pool := newService(t)
	ctx := context.Background()
	a := billingtest.NewAccount(t, pool, billingtest.AccountOpts{})
	cust := billingtest.Principal(a, a.CustomerKey(t, pool, "c"))
	const short, racers = 10, 50
	for range collections.MaxCollectionsPerKey - short {
		if _, err := svc.Create(ctx, cust, collections.CreateRequest{Name: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, racers)
	for i := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = svc.Create(ctx, cust, collections.CreateRequest{Name: "racer"})
		}()
	}
	wg.Wait()
	passed := 0
	for _, err := range errs {
		if err == nil {
			passed++
		} else {
			codeOf(t, err, apperr.LimitReached)
		}
	}
	var made int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM collections WHERE api_key_id = $1`, cust.KeyID).Scan(&made); err != nil {
		t.Fatal(err)
	}
	if passed != short || made != collections.MaxCollectionsPerKey {
		t.Fatalf("%d creations passed, %d collections; want %d, %d", passed, made, short, collections.MaxCollectionsPerKey)
	}
	page, err := svc.List(ctx, cust, collections.ListQuery{Limit: 1})
	if err != nil || len(page.Collections) != 1 {
		t.Fatalf("list: %+v %v", page, err)
	}
	if err := svc.Delete(ctx, cust, page.Collections[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Create(ctx, cust, collections.CreateRequest{Name: "room again"}); err != nil {
		t.Fatalf("after a delete: %v", err)
	}
	// The root key reads its customer's collections, but does not change them.
	if _, err := svc.Get(ctx, a.Root, page.Collections[0].ID); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("deleted collection read: %v", err)
	}
}

// TestRevokedKeysCollectionsSwept: a revoked customer key's collections
// stay readable by its root within the retention and are removed by the
// sweep after it; a live key's are never swept.
func TestRevokedKeysCollectionsSwept(t *testing.T) {
	t.Parallel()
	svc, pool := newService(t)
	ctx := context.Background()
	a := billingtest.NewAccount(t, pool, billingtest.AccountOpts{})
	gone := billingtest.Principal(a, a.CustomerKey(t, pool, "leaving"))
	stays := billingtest.Principal(a, a.CustomerKey(t, pool, "staying"))
	v := billingtest.Videos(t, pool, 2, "easy")
	var kept uuid.UUID
	var swept uuid.UUID
	for _, p := range []tenancy.Principal{gone, stays} {
		c, err := svc.Create(ctx, p, collections.CreateRequest{Name: "list"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.AddItems(ctx, p, c.ID, v); err != nil {
			t.Fatal(err)
		}
		if p.KeyID == gone.KeyID {
			swept = c.ID
		} else {
			kept = c.ID
		}
	}
	var revokedAt time.Time
	if err := pool.QueryRow(ctx, `UPDATE api_keys SET revoked_at = now() WHERE id = $1 RETURNING revoked_at`, gone.KeyID).Scan(&revokedAt); err != nil {
		t.Fatal(err)
	}
	within := revokedAt.Add(svc.Retention() - time.Minute)
	if n, err := svc.SweepRevoked(ctx, within); err != nil || n != 0 {
		t.Fatalf("sweep within the retention removed %d: %v", n, err)
	}
	if _, page, err := svc.Items(ctx, a.Root, swept, collections.ItemsQuery{}); err != nil || len(page.Items) != 2 {
		t.Fatalf("root reads the revoked key's collection: %+v %v", page, err)
	}
	if n, err := svc.SweepRevoked(ctx, revokedAt.Add(svc.Retention()+time.Minute)); err != nil || n != 1 {
		t.Fatalf("sweep after the retention removed %d, want 1: %v", n, err)
	}
	if _, err := svc.Get(ctx, a.Root, swept); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("swept collection read: %v", err)
	}
	if _, err := svc.Get(ctx, a.Root, kept); err != nil {
		t.Fatalf("live key's collection: %v", err)
	}
	var items int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM collection_items WHERE collection_id = $1`, swept).Scan(&items); err != nil || items != 0 {
		t.Fatalf("%d items left of the swept collection (%v)", items, err)
	}
}

// TestSweepWithAShortRetention: a service whose retention is a second
// keeps a revoked key's collection at first and removes it once the
// second has passed, on the real clock.
func TestSweepWithAShortRetention(t *testing.T) {
	t.Parallel()
	pool, _ := testkit.NewPool(t)
	svc := collections.New(pool, wiringtest.Over(t, pool).Billing, collections.ServiceOptions{Retention: time.Second})
	ctx := context.Background()
	a := billingtest.NewAccount(t, pool, billingtest.AccountOpts{})
	p := billingtest.Principal(a, a.CustomerKey(t, pool, "brief"))
	// More than one sweep statement's batch.
	var c collections.Collection
	for range collections.SweepBatch + 5 {
		var err error
		if c, err = svc.Create(ctx, p, collections.CreateRequest{Name: "brief"}); err != nil {
			t.Fatal(err)
		}
	}
	revoked := time.Now() // no later than the row's revoked_at
	if _, err := pool.Exec(ctx, `UPDATE api_keys SET revoked_at = now() WHERE id = $1`, p.KeyID); err != nil {
		t.Fatal(err)
	}
	if n, err := svc.SweepRevoked(ctx, time.Now()); err != nil || n != 0 {
		t.Fatalf("sweep at once removed %d: %v", n, err)
	}
	// Sweep until the retention has passed on the real clock.
	for {
		n, err := svc.SweepRevoked(ctx, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			if n != collections.SweepBatch+5 || time.Since(revoked) < time.Second {
				t.Fatalf("swept %d after %s, want %d after the retention", n, time.Since(revoked), collections.SweepBatch+5)
			}
			break
		}
		if time.Since(revoked) > 15*time.Second {
			t.Fatal("nothing swept 15 s after the revocation")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := svc.Get(ctx, a.Root, c.ID); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("swept collection: %v", err)
	}
}

// TestAccountOwnerReadsEveryKeysCollections: the dashboard's principal
// (the account owner) lists the account's live collections, or with Test
// its test ones, and may narrow the list to any key of the account; a key
// of another account is 404 to it.
func TestAccountOwnerReadsEveryKeysCollections(t *testing.T) {
	t.Parallel()
	svc, pool := newService(t)
	ctx := context.Background()
	a := billingtest.NewAccount(t, pool, billingtest.AccountOpts{})
	sibling := a.AnotherRoot(t, pool, "second")
	other := billingtest.NewAccount(t, pool, billingtest.AccountOpts{})
	cust := billingtest.Principal(a, a.CustomerKey(t, pool, "c"))
	test := billingtest.Principal(a, a.TestKey(t, pool, "t"))
	made := map[string]uuid.UUID{}
	for name, p := range map[string]tenancy.Principal{"root": a.Root, "sibling": sibling.Root, "customer": cust, "test": test, "other": other.Root} {
		c, err := svc.Create(ctx, p, collections.CreateRequest{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		made[name] = c.ID
	}
	owner := tenancy.Principal{AccountID: a.ID, Kind: tenancy.KindRoot}
	ids := func(q collections.ListQuery, test bool) []uuid.UUID {
		t.Helper()
		p := owner
		p.Test = test
		page, err := svc.List(ctx, p, q)
		if err != nil {
			t.Fatal(err)
		}
		var out []uuid.UUID
		for _, c := range page.Collections {
			out = append(out, c.ID)
		}
		slices.SortFunc(out, func(x, y uuid.UUID) int { return slices.Compare(x[:], y[:]) })
		return out
	}
	sorted := func(xs ...uuid.UUID) []uuid.UUID {
		slices.SortFunc(xs, func(x, y uuid.UUID) int { return slices.Compare(x[:], y[:]) })
		return xs
	}
	if got, want := ids(collections.ListQuery{}, false), sorted(made["root"], made["sibling"], made["customer"]); !slices.Equal(got, want) {
		t.Errorf("live: %v, want %v", got, want)
	}
	if got := ids(collections.ListQuery{}, true); !slices.Equal(got, []uuid.UUID{made["test"]}) {
		t.Errorf("test: %v", got)
	}
	if got := ids(collections.ListQuery{KeyID: sibling.Root.KeyID}, false); !slices.Equal(got, []uuid.UUID{made["sibling"]}) {
		t.Errorf("narrowed to the sibling root: %v", got)
	}
	if _, err := svc.List(ctx, owner, collections.ListQuery{KeyID: other.Root.KeyID}); apperr.CodeOf(err) != apperr.NotFound {
		t.Errorf("another account's key: %v", err)
	}
}
