package tenancy

import (
	"context"
	"fmt"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"broll/internal/apperr"
	"broll/internal/paging"
)

// customer issues a customer key under root and returns its principal.
func (b *bundle) customer(t *testing.T, root Principal, label string) Principal {
	t.Helper()
	k, err := b.svc.CreateCustomerKey(context.Background(), root, label, nil)
	if err != nil {
		t.Fatal(err)
	}
	return Principal{KeyID: k.ID, AccountID: root.AccountID, RootKeyID: root.KeyID, Kind: KindCustomer, Scopes: k.Scopes}
}

// bulkKeys inserts n customer keys under root in one statement (they share
// one created_at).
func (b *bundle) bulkKeys(t testing.TB, root Principal, n int) {
	t.Helper()
	if _, err := b.pool.Exec(context.Background(), `
		INSERT INTO api_keys (account_id, kind, parent_id, label, scopes, key_hash, key_prefix)
		SELECT $1, 'customer', $2, 'bulk ' || i, ARRAY['broll:read'], uuid_send(gen_random_uuid()), 'dsk_bulk'
		FROM generate_series(1, $3::int) AS i`, root.AccountID, root.KeyID, n); err != nil {
		t.Fatal(err)
	}
}

// parsePage reads a page as GET /api/v1/keys does.
func parsePage(t *testing.T, query string) paging.Request {
	t.Helper()
	v, err := url.ParseQuery(query)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := paging.Parse(v, KeyListBounds)
	if err != nil {
		t.Fatal(err)
	}
	return pr
}

func (b *bundle) keyPage(t *testing.T, root Principal, kp KeyListParams) KeyPage {
	t.Helper()
	q, err := kp.Parse()
	if err != nil {
		t.Fatal(err)
	}
	page, err := b.svc.CustomerKeyPage(context.Background(), root, q, b.usage)
	if err != nil {
		t.Fatal(err)
	}
	return page
}

// TestKeyListWalksThousands: 5,000 customer keys, many created at the very
// same time, are listed each exactly once by following next_cursor, while
// new keys are created between pages (they come after, on the last pages).
func TestKeyListWalksThousands(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	root := b.account(t)
	other := b.account(t)
	b.customer(t, other, "not ours")
	// Each batch is one statement: its rows share now(), so only the id
	// orders them.
	for batch := 0; batch < 5; batch++ {
		b.bulkKeys(t, root, 1000)
	}
	for _, limit := range []int{500, 137} {
		t.Run(fmt.Sprint("limit ", limit), func(t *testing.T) {
			seen := map[uuid.UUID]int{}
			var added []uuid.UUID
			var prev time.Time
			page := b.keyPage(t, root, KeyListParams{Page: paging.Request{Limit: limit}})
			for pages := 0; ; pages++ {
				for _, k := range page.Keys {
					seen[k.ID]++
					if k.ParentID.UUID != root.KeyID {
						t.Fatalf("key %s of another root listed", k.ID)
					}
					if k.CreatedAt.Before(prev) {
						t.Fatalf("key %s out of order", k.ID)
					}
					prev = k.CreatedAt
				}
				if page.NextCursor == "" {
					break
				}
				if pages < 3 {
					added = append(added, b.customer(t, root, "added while paging").KeyID)
				}
				page = b.keyPage(t, root, KeyListParams{Page: paging.Request{Limit: limit, Cursor: page.NextCursor}})
			}
			for id, n := range seen {
				if n != 1 {
					t.Fatalf("key %s listed %d times", id, n)
				}
			}
			for _, id := range added {
				if seen[id] != 1 {
					t.Fatalf("key %s created while paging was not listed", id)
				}
			}
			var want int
			if err := b.pool.QueryRow(ctx, `SELECT count(*) FROM api_keys WHERE parent_id = $1`, root.KeyID).Scan(&want); err != nil {
				t.Fatal(err)
			}
			if len(seen) != want || want < 5000 {
				t.Fatalf("listed %d keys, the root has %d", len(seen), want)
			}
		})
	}
	if p := b.keyPage(t, root, KeyListParams{Page: parsePage(t, "limit=100000")}); len(p.Keys) != 500 || !p.HasMore {
		t.Fatalf("a huge limit: %d keys, has_more %v; want 500 and more", len(p.Keys), p.HasMore)
	}
	if p := b.keyPage(t, root, KeyListParams{}); len(p.Keys) != 100 {
		t.Fatalf("default limit: %d keys, want 100", len(p.Keys))
	}
}

// TestKeyListFilters: customer_label is an exact match, status picks live
// or revoked keys, and a cursor only continues the filters it came from.
func TestKeyListFilters(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	root := b.account(t)
	a1 := b.customer(t, root, "acme")
	a2 := b.customer(t, root, "acme")
	b.customer(t, root, "acme corp")
	b.customer(t, root, "ACME")
	if _, err := b.svc.revokeRows(ctx, CustomerKeysOf(root), a2.KeyID); err != nil {
		t.Fatal(err)
	}
	ids := func(p KeyPage) []uuid.UUID {
		out := make([]uuid.UUID, len(p.Keys))
		for i, k := range p.Keys {
			out[i] = k.ID
		}
		return out
	}
	same := func(got []uuid.UUID, want ...uuid.UUID) bool {
		if len(got) != len(want) {
			return false
		}
		for i := range got {
			if got[i] != want[i] {
				return false
			}
		}
		return true
	}
	if got := ids(b.keyPage(t, root, KeyListParams{CustomerLabel: " acme "})); !same(got, a1.KeyID, a2.KeyID) {
		t.Fatalf("label acme: %v", got)
	}
	if got := ids(b.keyPage(t, root, KeyListParams{CustomerLabel: "acme", Status: "active"})); !same(got, a1.KeyID) {
		t.Fatalf("active acme: %v", got)
	}
	if got := ids(b.keyPage(t, root, KeyListParams{Status: "Revoked"})); !same(got, a2.KeyID) {
		t.Fatalf("revoked: %v", got)
	}
	if got := b.keyPage(t, root, KeyListParams{Status: "active"}); len(got.Keys) != 3 {
		t.Fatalf("active: %d keys, want 3", len(got.Keys))
	}

	first := b.keyPage(t, root, KeyListParams{Page: paging.Request{Limit: 1}, CustomerLabel: "acme"})
	if first.NextCursor == "" || !first.HasMore {
		t.Fatal("no next_cursor on a first page of two")
	}
	if next := b.keyPage(t, root, KeyListParams{Page: paging.Request{Limit: 1, Cursor: first.NextCursor}, CustomerLabel: "acme"}); !same(ids(next), a2.KeyID) || next.HasMore || next.NextCursor != "" {
		t.Fatalf("second page: %v, has_more %v", ids(next), next.HasMore)
	}

	// A cursor edited by hand: its query fingerprint changed, or its time
	// made not a time. (Flipping a byte at random could land on a digit
	// of the time and make a valid cursor of another position, which the
	// list rightly accepts.)
	var c paging.Cursor
	if err := paging.DecodeCursor(first.NextCursor, &c); err != nil {
		t.Fatal(err)
	}
	edited, badTime := c, c
	edited.Query += "x"
	badTime.Keys = []any{"yesterday"}
	bad := []struct {
		name  string
		kp    KeyListParams
		field string
	}{
		{"unknown status", KeyListParams{Status: "paused"}, "status"},
		{"label too long", KeyListParams{CustomerLabel: string(make([]byte, 201))}, "customer_label"},
		{"cursor of other filters", KeyListParams{Page: paging.Request{Cursor: first.NextCursor}}, "cursor"},
		{"cursor of another status", KeyListParams{CustomerLabel: "acme", Status: "revoked", Page: paging.Request{Cursor: first.NextCursor}}, "cursor"},
		{"edited cursor", KeyListParams{CustomerLabel: "acme", Page: paging.Request{Cursor: paging.EncodeCursor(edited)}}, "cursor"},
		{"cursor with no time", KeyListParams{CustomerLabel: "acme", Page: paging.Request{Cursor: paging.EncodeCursor(badTime)}}, "cursor"},
		{"not a cursor", KeyListParams{Page: paging.Request{Cursor: "%%%"}}, "cursor"},
	}
	// The limit is read by the paging parser against the list's bounds.
	for _, query := range []string{"limit=0", "limit=ten", "limit=-1"} {
		v, _ := url.ParseQuery(query)
		if _, err := paging.Parse(v, KeyListBounds); apperr.CodeOf(err) != apperr.Invalid {
			t.Errorf("%s: %v, want invalid_request", query, err)
		}
	}
	for _, tc := range bad {
		_, err := tc.kp.Parse()
		e, ok := apperr.As(err)
		if !ok || e.Code != apperr.Invalid || e.Field != tc.field {
			t.Errorf("%s: %v, want invalid_request on %s", tc.name, err, tc.field)
			continue
		}
		if tc.field == "status" && e.Fields["allowed_values"] == nil {
			t.Errorf("%s: no allowed_values", tc.name)
		}
	}
}

// TestKeyListCountersWithoutFlush: the list's counters are exact up to the
// last request without any flush, in every state a concurrent flush can be
// in: nothing flushed, a batch taken but not applied, a batch applied but
// not yet cleared from Redis, and after the flush.
func TestKeyListCountersWithoutFlush(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	root := b.account(t)
	busy := b.customer(t, root, "busy")
	idle := b.customer(t, root, "idle")
	counters := func(what string, want int64) {
		t.Helper()
		page := b.keyPage(t, root, KeyListParams{})
		for _, k := range page.Keys {
			switch k.ID {
			case busy.KeyID:
				if k.TotalRequests != want || k.LastUsedAt == nil {
					t.Fatalf("%s: busy key total_requests %d last_used_at %v, want %d", what, k.TotalRequests, k.LastUsedAt, want)
				}
			case idle.KeyID:
				if k.TotalRequests != 0 || k.LastUsedAt != nil {
					t.Fatalf("%s: idle key total_requests %d last_used_at %v", what, k.TotalRequests, k.LastUsedAt)
				}
			}
		}
	}
	stored := func() int64 {
		k, err := b.svc.GetKey(ctx, busy.KeyID)
		if err != nil {
			t.Fatal(err)
		}
		return k.TotalRequests
	}

	b.admit(t, busy, 3)
	counters("counted in Redis only", 3)
	if stored() != 0 {
		t.Fatal("listing flushed the counters")
	}

	// A flush takes the batch aside, and requests go on meanwhile.
	keys := b.usage.batchKeys()
	if err := takeBatch.Run(ctx, b.rdb, keys, "batch-1").Err(); err != nil {
		t.Fatal(err)
	}
	b.admit(t, busy, 2)
	counters("batch taken, not applied", 5)

	// The batch reaches Postgres; its Redis copy is still there.
	if _, err := b.pool.Exec(ctx, `WITH f AS (INSERT INTO usage_flushes (batch_id) VALUES ('batch-1'))
		UPDATE api_keys SET total_requests = total_requests + 3, last_used_at = now() WHERE id = $1`, busy.KeyID); err != nil {
		t.Fatal(err)
	}
	counters("batch applied, not cleared", 5)

	// The next flush clears the batch left behind; the one after moves the
	// counts made meanwhile.
	for i := 0; i < 2; i++ {
		if err := b.usage.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		counters("flushed", 5)
	}
	if stored() != 5 {
		t.Fatalf("stored %d after the flush, want 5", stored())
	}
	b.admit(t, busy, 1)
	counters("after the flush", 6)
}

// TestKeyListCountersWhileFlushing: with requests and flushes running all
// the time, every list shows at least the requests finished before it began
// and never more than were made by its end: a batch moving to Postgres while
// the list reads is never counted twice, nor lost.
func TestKeyListCountersWhileFlushing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx, cancel := context.WithCancel(context.Background())
	root := b.account(t)
	busy := b.customer(t, root, "busy")
	var admitted atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	wg.Add(2)
	go func() { // one client, so at most one request is in flight
		defer wg.Done()
		for ctx.Err() == nil {
			if _, err := b.gate.Admit(ctx, busy.Caller()); err != nil && ctx.Err() == nil {
				errs <- err
				return
			}
			admitted.Add(1)
		}
	}()
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			if err := b.usage.Flush(ctx); err != nil && ctx.Err() == nil {
				errs <- err
				return
			}
		}
	}()
	defer func() {
		cancel()
		wg.Wait()
	}()
	q, err := KeyListParams{}.Parse()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 200; i++ {
		before := admitted.Load()
		page, err := b.svc.CustomerKeyPage(ctx, root, q, b.usage)
		if err != nil {
			t.Fatal(err)
		}
		after := admitted.Load() + 1
		if len(page.Keys) != 1 {
			t.Fatalf("%d keys", len(page.Keys))
		}
		if n := page.Keys[0].TotalRequests; n < before || n > after {
			k, _ := b.svc.GetKey(ctx, busy.KeyID)
			t.Fatalf("list %d: total_requests %d (stored now %d), want between %d and %d; errs %d", i, n, k.TotalRequests, before, after, len(errs))
		}
		select {
		case err := <-errs:
			t.Fatal(err)
		default:
		}
	}
}
