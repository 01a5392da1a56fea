package api

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/google/uuid"

	"broll/billing/billingtest"
	"broll/clients/go/brollclient"
	"broll/tenancy"
)

// newCollection makes a collection with key holding clips, over REST.
func (e *testEnv) newCollection(t *testing.T, key, name string, clips ...uuid.UUID) brollclient.Collection {
	t.Helper()
	c := expect[brollclient.Collection](t, e.do(t, 0, "POST", "/api/v1/collections", key, map[string]any{"name": name}), 201)
	for len(clips) > 0 {
		n := min(len(clips), 50)
		c = expect[brollclient.Collection](t, e.do(t, 0, "PUT", "/api/v1/collections/"+c.Id.String()+"/items", key,
			map[string]any{"video_ids": clips[:n]}), 200)
		clips = clips[n:]
	}
	return c
}

func collectionIDs(l brollclient.CollectionList) []uuid.UUID {
	out := make([]uuid.UUID, len(l.Collections))
	for i, c := range l.Collections {
		out[i] = c.Id
	}
	slices.SortFunc(out, func(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) })
	return out
}

func sortedIDs(ids ...uuid.UUID) []uuid.UUID {
	out := slices.Clone(ids)
	slices.SortFunc(out, func(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) })
	return out
}

// TestCollectionsVisibilityMatrix: an account with two root keys, each
// with a customer, a test key, and another account, each key with a
// collection. Each key lists and reads exactly what the rule lets it see
// (its own; a root also its customers' live ones), anyone else gets 404,
// a root key reading a customer's collection may not change it (403), the
// api_key_id filter follows the key family, and the scopes hold.
func TestCollectionsVisibilityMatrix(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{perMinute: 1_000_000})
	a := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{})
	b := a.AnotherRoot(t, e.pool, "second integration")
	other := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{})
	aCust, bCust := a.CustomerKey(t, e.pool, "a-customer"), b.CustomerKey(t, e.pool, "b-customer")
	aTest := a.TestKey(t, e.pool, "a-test")
	otherCust := other.CustomerKey(t, e.pool, "other-customer")
	reader := a.CustomerKey(t, e.pool, "reader", string(tenancy.ScopeBrollRead))
	v := billingtest.Videos(t, e.pool, 2, "easy")

	keys := map[string]string{"root A": a.RootKey.Secret, "root B": b.RootKey.Secret, "A's customer": aCust.Secret,
		"B's customer": bCust.Secret, "A's test key": aTest.Secret, "other account": otherCust.Secret}
	cols := map[string]brollclient.Collection{}
	for name, key := range keys {
		cols[name] = e.newCollection(t, key, name, v...)
	}
	if !cols["root A"].Livemode || cols["A's test key"].Livemode {
		t.Fatalf("livemode: live %v, test %v", cols["root A"].Livemode, cols["A's test key"].Livemode)
	}
	sees := map[string][]string{
		"root A":        {"root A", "A's customer"},
		"root B":        {"root B", "B's customer"},
		"A's customer":  {"A's customer"},
		"B's customer":  {"B's customer"},
		"A's test key":  {"A's test key"},
		"other account": {"other account"},
	}
	for viewer, key := range keys {
		t.Run(viewer, func(t *testing.T) {
			var want []uuid.UUID
			for _, n := range sees[viewer] {
				want = append(want, cols[n].Id)
			}
			got := collectionIDs(expect[brollclient.CollectionList](t, e.do(t, 0, "GET", "/api/v1/collections", key, nil), 200))
			if !slices.Equal(got, sortedIDs(want...)) {
				t.Errorf("lists %v, want %v", got, sortedIDs(want...))
			}
			for owner, c := range cols {
				r := e.do(t, 0, "GET", "/api/v1/collections/"+c.Id.String(), key, nil)
				if !slices.Contains(sees[viewer], owner) {
					if r.status != 404 {
						t.Errorf("reads %s's collection: %d, want 404", owner, r.status)
					}
					continue
				}
				got := expect[brollclient.CollectionWithItems](t, r, 200)
				if len(got.Items) != 2 || got.Items[0].Id != v[0] || got.Items[1].Id != v[1] || got.ItemCount != 2 {
					t.Errorf("reads %s's collection: %+v", owner, got)
				}
				patch := e.do(t, 0, "PATCH", "/api/v1/collections/"+c.Id.String(), key, map[string]any{"description": "x"})
				if want := map[bool]int{true: 200, false: 403}[owner == viewer]; patch.status != want {
					t.Errorf("changes %s's collection: %d, want %d", owner, patch.status, want)
				}
			}
		})
	}

	// The key filter: a root names itself or its customers; a sibling's
	// key is 404; a customer key may not filter.
	byKey := func(key string, id uuid.UUID) response {
		return e.do(t, 0, "GET", "/api/v1/collections?api_key_id="+id.String(), key, nil)
	}
	if got := collectionIDs(expect[brollclient.CollectionList](t, byKey(a.RootKey.Secret, aCust.ID), 200)); !slices.Equal(got, []uuid.UUID{cols["A's customer"].Id}) {
		t.Errorf("root A filtered to its customer: %v", got)
	}
	for _, c := range []struct {
		key    string
		id     uuid.UUID
		status int
	}{{a.RootKey.Secret, bCust.ID, 404}, {a.RootKey.Secret, b.RootKey.ID, 404}, {a.RootKey.Secret, otherCust.ID, 404},
		{aCust.Secret, aCust.ID, 403}} {
		if r := byKey(c.key, c.id); r.status != c.status {
			t.Errorf("api_key_id %s: %d, want %d: %s", c.id, r.status, c.status, r.raw)
		}
	}

	// Scopes: broll:read reads, broll:purchase changes.
	mine := e.do(t, 0, "POST", "/api/v1/collections", reader.Secret, map[string]any{"name": "no"})
	if p := problemOf(t, mine); mine.status != 403 || p.Code != "insufficient_scope" {
		t.Errorf("a read-only key creates: %d %s", mine.status, mine.raw)
	}
	expect[brollclient.CollectionList](t, e.do(t, 0, "GET", "/api/v1/collections", reader.Secret, nil), 200)
	// Deleting: the owner only; then it is gone for its root too.
	if r := e.do(t, 0, "DELETE", "/api/v1/collections/"+cols["A's customer"].Id.String(), a.RootKey.Secret, nil); r.status != 403 {
		t.Errorf("root deletes its customer's collection: %d", r.status)
	}
	expect[brollclient.CollectionDeleted](t, e.do(t, 0, "DELETE", "/api/v1/collections/"+cols["A's customer"].Id.String(), aCust.Secret, nil), 200)
	if r := e.do(t, 0, "GET", "/api/v1/collections/"+cols["A's customer"].Id.String(), a.RootKey.Secret, nil); r.status != 404 {
		t.Errorf("deleted collection: %d", r.status)
	}
}

// TestCollectionItemCapOverHTTP: 50 concurrent PUTs of one new clip each,
// through two nodes, to a collection 10 clips short of 5,000: exactly 10
// are added, the other 40 answer 409 limit_reached, and the count is right.
func TestCollectionItemCapOverHTTP(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{nodes: 2, perMinute: 1_000_000})
	a := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{})
	key := a.CustomerKey(t, e.pool, "shortlister").Secret
	const short, racers = 10, 50
	v := billingtest.Videos(t, e.pool, 5000-short+racers, "easy")
	c := e.newCollection(t, key, "nearly full", v[:5000-short]...)
	statuses := make([]int, racers)
	var wg sync.WaitGroup
	for i := range racers {
		wg.Go(func() {
			r := e.sendUnchecked(t, i%2, "PUT", "/api/v1/collections/"+c.Id.String()+"/items", bearerHeader(key),
				map[string]any{"video_ids": []uuid.UUID{v[5000-short+i]}})
			statuses[i] = r.status
			if r.status == 409 && problemOf(t, r).Code != "limit_reached" {
				t.Errorf("409 %s", r.raw)
			}
		})
	}
	wg.Wait()
	count := map[int]int{}
	for _, s := range statuses {
		count[s]++
	}
	if count[200] != short || count[409] != racers-short {
		t.Fatalf("statuses %v, want %d x 200 and %d x 409", count, short, racers-short)
	}
	got := expect[brollclient.CollectionWithItems](t, e.do(t, 0, "GET", "/api/v1/collections/"+c.Id.String()+"?limit=1", key, nil), 200)
	if got.ItemCount != 5000 || got.Items[0].Id != v[0] {
		t.Fatalf("after the race: %d clips, first %v", got.ItemCount, got.Items[0].Id)
	}
}

// TestBuyCollectionOnceWithOneIdempotencyKey: a collection of 50 clips
// bought by 10 identical requests at once, through two nodes, with one
// Idempotency-Key: every answer is the one purchase (or in use while it
// runs), the 50 clips are charged once, and the balance equals the ledger.
func TestBuyCollectionOnceWithOneIdempotencyKey(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{nodes: 2, perMinute: 1_000_000})
	a := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 100_000})
	key := a.CustomerKey(t, e.pool, "buyer").Secret
	v := billingtest.Videos(t, e.pool, 50, "easy")
	c := e.newCollection(t, key, "campaign", v...)
	body := map[string]any{"collection_id": c.Id, "expected_total": 250}
	header := map[string]string{"Authorization": "Bearer " + key, "Idempotency-Key": "buy-campaign-1"}
	res := make([]response, 10)
	var wg sync.WaitGroup
	for i := range res {
		wg.Go(func() { res[i] = e.sendUnchecked(t, i%2, "POST", "/api/v1/broll/purchase", header, body) })
	}
	wg.Wait()
	var first *brollclient.PurchaseResult
	for i, r := range res {
		switch r.status {
		case 200:
			got := decode[brollclient.PurchaseResult](t, r)
			if len(got.Purchases) != 50 || got.TotalCharged != 250 || got.Skipped == nil || len(*got.Skipped) != 0 {
				t.Fatalf("answer %d: %d purchases for %v, skipped %v", i, len(got.Purchases), got.TotalCharged, got.Skipped)
			}
			if first != nil && deref(first.Purchases[0].PurchaseId) != deref(got.Purchases[0].PurchaseId) {
				t.Fatalf("two purchases answered: %v and %v", deref(first.Purchases[0].PurchaseId), deref(got.Purchases[0].PurchaseId))
			}
			first = &got
		case 409:
			if problemOf(t, r).Code != "idempotency_key_in_use" {
				t.Fatalf("answer %d: %s", i, r.raw)
			}
		default:
			t.Fatalf("answer %d: %d %s", i, r.status, r.raw)
		}
	}
	if first == nil {
		t.Fatal("no request bought the collection")
	}
	var purchases int
	var balance, ledger int64
	if err := e.pool.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM purchases WHERE account_id = $1),
		(SELECT balance_cents FROM accounts WHERE id = $1), (SELECT sum(amount_cents) FROM ledger WHERE account_id = $1)`,
		a.ID).Scan(&purchases, &balance, &ledger); err != nil {
		t.Fatal(err)
	}
	if purchases != 50 || balance != 100_000-25_000 || balance != ledger {
		t.Fatalf("%d purchases, balance %d, ledger %d; want 50, %d", purchases, balance, ledger, 100_000-25_000)
	}
}

// TestBuyCollectionSkipsRetiredUnsoundAndOwned: a collection holding a
// clip the key owns, a retired clip and one whose media failed its probe,
// besides three on sale. Reading it shows the retired clip marked and
// leaves the unsound one out; a quote and then the purchase charge the
// three alone and list the others as skipped with their reasons; buying
// again charges nothing. Bad purchase bodies naming a collection are 400
// naming the field, and charge nothing.
func TestBuyCollectionSkipsRetiredUnsoundAndOwned(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{perMinute: 1_000_000})
	ctx := context.Background()
	a := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 10_000})
	key := a.CustomerKey(t, e.pool, "buyer").Secret
	v := billingtest.Videos(t, e.pool, 6, "easy") // 5.00 each
	owned, retired, unsound := v[3], v[4], v[5]
	e.buy(t, 0, key, owned)
	c := e.newCollection(t, key, "mixed", v...)
	if _, err := e.ctl.Catalog.Retire(ctx, retired); err != nil {
		t.Fatal(err)
	}
	if _, err := e.pool.Exec(ctx, `UPDATE videos SET media_status = 'failed', retired_at = 'infinity' WHERE id = $1`, unsound); err != nil {
		t.Fatal(err)
	}

	got := expect[brollclient.CollectionWithItems](t, e.do(t, 0, "GET", "/api/v1/collections/"+c.Id.String(), key, nil), 200)
	var listed []uuid.UUID
	for _, it := range got.Items {
		listed = append(listed, it.Id)
		if it.Id == retired && (it.Retired == nil || !*it.Retired) {
			t.Errorf("the retired clip is not marked retired: %+v", it)
		}
		if (it.Id == owned) != it.Owned {
			t.Errorf("clip %s owned %v", it.Id, it.Owned)
		}
	}
	if want := []uuid.UUID{v[0], v[1], v[2], owned, retired}; !slices.Equal(listed, want) || got.ItemCount != 6 {
		t.Fatalf("items %v (count %d), want %v (count 6)", listed, got.ItemCount, want)
	}

	wantSkipped := []brollclient.PurchaseSkipped{{VideoId: owned, Reason: "already_owned"}, {VideoId: retired, Reason: "retired"},
		{VideoId: unsound, Reason: "unavailable"}}
	buy := func(body map[string]any) brollclient.PurchaseResult {
		t.Helper()
		return expect[brollclient.PurchaseResult](t, e.do(t, 0, "POST", "/api/v1/broll/purchase", key, body), 200)
	}
	quote := buy(map[string]any{"collection_id": c.Id, "dry_run": true})
	if quote.TotalCharged != 15 || len(quote.Purchases) != 3 || !slices.Equal(deref(quote.Skipped), wantSkipped) || quote.Balance != 95 {
		t.Fatalf("quote: %v for %d clips, skipped %v, balance %v", quote.TotalCharged, len(quote.Purchases), deref(quote.Skipped), quote.Balance)
	}
	if r := e.do(t, 0, "POST", "/api/v1/broll/purchase", key, map[string]any{"collection_id": c.Id, "expected_total": 10}); r.status != 409 {
		t.Fatalf("wrong expected_total: %d %s", r.status, r.raw)
	}
	bought := buy(map[string]any{"collection_id": c.Id, "expected_total": 15})
	var ids []uuid.UUID
	for _, p := range bought.Purchases {
		ids = append(ids, p.VideoId)
	}
	if !slices.Equal(ids, v[:3]) || bought.TotalCharged != 15 || bought.Balance != 80 || !slices.Equal(deref(bought.Skipped), wantSkipped) {
		t.Fatalf("bought %v for %v (balance %v), skipped %v", ids, bought.TotalCharged, bought.Balance, deref(bought.Skipped))
	}
	again := buy(map[string]any{"collection_id": c.Id})
	if again.TotalCharged != 0 || len(again.Purchases) != 0 || again.Balance != 80 || len(deref(again.Skipped)) != 6 {
		t.Fatalf("buying again: %v for %d clips, skipped %v", again.TotalCharged, len(again.Purchases), deref(again.Skipped))
	}
	if r := e.do(t, 0, "POST", "/api/v1/broll/purchase", key, map[string]any{"collection_id": c.Id, "expected_total": 5}); r.status != 409 {
		t.Fatalf("nothing to buy with expected_total 5: %d %s", r.status, r.raw)
	}

	for _, bad := range []struct {
		body  any
		field string
	}{
		{map[string]any{"collection_id": c.Id, "video_ids": []uuid.UUID{v[0]}}, "collection_id"},
		{map[string]any{"dry_run": true}, "video_ids"},
		{map[string]any{"collection_id": "nope"}, "collection_id"},
		{map[string]any{"collection_id": c.Id, "expected_total": -1}, "expected_total"},
	} {
		r := e.do(t, 0, "POST", "/api/v1/broll/purchase", key, bad.body)
		if p := problemOf(t, r); r.status != 400 || deref(p.Field) != bad.field {
			t.Errorf("%v: %d field %q, want 400 naming %s", bad.body, r.status, deref(p.Field), bad.field)
		}
	}
	// Another key's collection is 404 to a purchase as to a read.
	stranger := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 10_000})
	if r := e.do(t, 0, "POST", "/api/v1/broll/purchase", stranger.RootKey.Secret, map[string]any{"collection_id": c.Id}); r.status != 404 {
		t.Errorf("a stranger buys the collection: %d %s", r.status, r.raw)
	}
	var bal int64
	if err := e.pool.QueryRow(ctx, `SELECT balance_cents FROM accounts WHERE id = $1`, a.ID).Scan(&bal); err != nil || bal != 8000 {
		t.Fatalf("balance %d (%v), want 8000", bal, err)
	}
}

// TestCollectionItemsPagedInOrder: items come in pages in the order
// added, adding a clip again leaves it in place, and unknown ids are 404
// naming them with nothing added.
func TestCollectionItemsPagedInOrder(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{perMinute: 1_000_000})
	a := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{})
	key := a.CustomerKey(t, e.pool, "pager").Secret
	v := billingtest.Videos(t, e.pool, 7, "easy")
	order := []uuid.UUID{v[6], v[2], v[4], v[0], v[5], v[1], v[3]}
	c := e.newCollection(t, key, "ordered", order...)
	c = expect[brollclient.Collection](t, e.do(t, 0, "PUT", "/api/v1/collections/"+c.Id.String()+"/items", key,
		map[string]any{"video_ids": []uuid.UUID{v[4], v[4], v[6]}}), 200)
	if c.ItemCount != 7 {
		t.Fatalf("count after adding again: %d", c.ItemCount)
	}
	unknown := uuid.New()
	r := e.do(t, 0, "PUT", "/api/v1/collections/"+c.Id.String()+"/items", key, map[string]any{"video_ids": []uuid.UUID{unknown}})
	if r.status != 404 || !slices.Contains(errorOf[struct {
		Unknown []string `json:"unknown_video_ids"`
	}](t, r).Unknown, unknown.String()) {
		t.Fatalf("unknown clip: %d %s", r.status, r.raw)
	}
	var got []uuid.UUID
	path := "/api/v1/collections/" + c.Id.String() + "?limit=3"
	for pages := 1; ; pages++ {
		p := expect[brollclient.CollectionWithItems](t, e.do(t, 0, "GET", path, key, nil), 200)
		for _, it := range p.Items {
			got = append(got, it.Id)
		}
		if p.Pagination.NextCursor == nil {
			if pages != 3 || p.Pagination.HasMore {
				t.Fatalf("%d pages, has_more %v", pages, p.Pagination.HasMore)
			}
			break
		}
		path = fmt.Sprintf("/api/v1/collections/%s?limit=3&cursor=%s", c.Id, *p.Pagination.NextCursor)
	}
	if !slices.Equal(got, order) {
		t.Fatalf("items %v, want %v", got, order)
	}
	expect[brollclient.Collection](t, e.do(t, 0, "DELETE", "/api/v1/collections/"+c.Id.String()+"/items?video_id="+v[2].String(), key, nil), 200)
	p := expect[brollclient.CollectionWithItems](t, e.do(t, 0, "GET", "/api/v1/collections/"+c.Id.String(), key, nil), 200)
	if p.ItemCount != 6 || len(p.Items) != 6 || p.Items[1].Id != v[4] {
		t.Fatalf("after removing one: %d, %+v", p.ItemCount, p.Items)
	}
}
