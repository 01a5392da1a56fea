package billing_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"broll/billing"
	"broll/billing/billingtest"
	"broll/catalog"
	"broll/embed"
	"broll/internal/apperr"
	"broll/internal/paging"
	"broll/tenancy"
	"broll/wiring/wiringtest"
)

// TestListCursorWalk: next_cursor walks a root key's purchases newest
// first, each exactly once, while new purchases arrive between pages (they
// are newer, so they are not on the pages after the cursor); ties of one
// batch's shared time are broken by id.
func TestListCursorWalk(t *testing.T) {
	t.Parallel()
	pool, ctx, svc := setup(t)
	acct := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: 100000})
	alice := billingtest.Principal(acct, acct.CustomerKey(t, pool, "alice"))
	vids := billingtest.Videos(t, pool, 12, "easy")
	buy := func(p tenancy.Principal, ids ...uuid.UUID) {
		t.Helper()
		mustBuy(ctx, t, svc, p, ids)
	}
	buy(alice, vids[0:4]...) // one batch: four purchases at one time
	buy(acct.Root, vids[4:7]...)
	buy(alice, vids[7])

	list := func(lp billing.ListParams) billing.Listing {
		t.Helper()
		q, err := lp.Parse(acct.Root)
		if err != nil {
			t.Fatal(err)
		}
		l, err := svc.ListPurchases(ctx, acct.Root, q, nil)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	all := list(billing.ListParams{})
	if len(all.Purchases) != 8 || all.HasMore || all.NextCursor != "" {
		t.Fatalf("one page: %d purchases, has_more %v, cursor %q", len(all.Purchases), all.HasMore, all.NextCursor)
	}

	var walked []uuid.UUID
	page := list(billing.ListParams{Page: paging.Request{Limit: 3}})
	for i := 0; ; i++ {
		if page.Query.Offset != len(walked) {
			t.Errorf("page %d reports offset %d after %d rows", i, page.Query.Offset, len(walked))
		}
		for _, r := range page.Purchases {
			walked = append(walked, r.PurchaseID)
		}
		if page.NextCursor == "" {
			break
		}
		if !page.HasMore {
			t.Fatal("a next_cursor without has_more")
		}
		buy(alice, vids[8+i]) // arrives while the client pages
		page = list(billing.ListParams{Page: paging.Request{Limit: 3, Cursor: page.NextCursor}})
	}
	sameOrder(t, walked, all)
	// An offset page carries a cursor too, so a client can switch to it.
	if p := list(billing.ListParams{Page: paging.Request{Limit: 2, Offset: 2}}); p.NextCursor == "" {
		t.Fatal("an offset page with more after it has no next_cursor")
	} else if next := list(billing.ListParams{Page: paging.Request{Limit: 2, Cursor: p.NextCursor}}); next.Query.Offset != 4 {
		t.Fatalf("after page 2 of 2: offset %d, want 4", next.Query.Offset)
	}
}

// TestListCursorRefused: a cursor is only good for the query that handed it
// out; anything else is invalid_request on the cursor, never a 500.
func TestListCursorRefused(t *testing.T) {
	t.Parallel()
	pool, ctx, svc := setup(t)
	acct := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: 100000})
	vids := billingtest.Videos(t, pool, 3, "easy")
	mustBuy(ctx, t, svc, acct.Root, vids)
	q, _ := billing.ListParams{Page: paging.Request{Limit: 1}}.Parse(acct.Root)
	l, err := svc.ListPurchases(ctx, acct.Root, q, nil)
	if err != nil || l.NextCursor == "" {
		t.Fatalf("first page: %v %q", err, l.NextCursor)
	}
	cur := l.NextCursor
	// Edited by hand: the query fingerprint changed. (A byte flipped at
	// random could land on a digit of the time and make a valid cursor of
	// another position, which the list rightly accepts.)
	var fields map[string]any
	raw, err := base64.RawURLEncoding.DecodeString(cur)
	if err != nil || json.Unmarshal(raw, &fields) != nil {
		t.Fatalf("cursor %q is not base64url JSON", cur)
	}
	fields["q"] = fmt.Sprint(fields["q"]) + "x"
	raw, _ = json.Marshal(fields)
	edited := base64.RawURLEncoding.EncodeToString(raw)
	bad := []struct {
		name string
		lp   billing.ListParams
	}{
		{"another query's", billing.ListParams{Emotion: "happy", Page: paging.Request{Cursor: cur}}},
		{"another date range", billing.ListParams{StartDate: "2026-01-01", Page: paging.Request{Cursor: cur}}},
		{"semantic search", billing.ListParams{SemanticSearch: "cars", Page: paging.Request{Cursor: cur}}},
		{"edited", billing.ListParams{Page: paging.Request{Cursor: edited}}},
		{"not base64", billing.ListParams{Page: paging.Request{Cursor: "!!!"}}},
		{"base64 of something else", billing.ListParams{Page: paging.Request{Cursor: "eyJ4IjoxfQ"}}},
		{"with an offset", billing.ListParams{Page: paging.Request{Cursor: cur, Offset: 2}}},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.lp.Parse(acct.Root)
			if e, ok := apperr.As(err); !ok || e.Code != apperr.Invalid || e.Field != "cursor" {
				t.Fatalf("%v, want invalid_request on cursor", err)
			}
		})
	}
}

// TestListCursorSemantic: ranked by meaning, the cursor continues after the
// last similarity, so walking one by one gives the one-page order.
func TestListCursorSemantic(t *testing.T) {
	t.Parallel()
	pool, ctx, svc := setup(t)
	acct := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: 100000})
	builtin := embed.NewBuiltin()
	vids := embeddedClips(t, pool, builtin, "Woman laughing at her phone", "Woman laughing on a couch",
		"Man laughing in a car", "Woman laughing at her phone")
	mustBuy(ctx, t, svc, acct.Root, vids)
	list := func(lp billing.ListParams) billing.Listing {
		t.Helper()
		lp.SemanticSearch = "woman laughing at her phone"
		q, err := lp.Parse(acct.Root)
		if err != nil {
			t.Fatal(err)
		}
		l, err := svc.ListPurchases(ctx, acct.Root, q, fixedEmbedder{builtin})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	all := list(billing.ListParams{})
	if len(all.Purchases) < 3 {
		t.Fatalf("semantic: %d matches, want at least 3", len(all.Purchases))
	}
	var walked []uuid.UUID
	for page := list(billing.ListParams{Page: paging.Request{Limit: 1}}); ; page = list(billing.ListParams{Page: paging.Request{Limit: 1, Cursor: page.NextCursor}}) {
		for _, r := range page.Purchases {
			walked = append(walked, r.PurchaseID)
		}
		if page.NextCursor == "" || len(walked) > len(all.Purchases) {
			break
		}
	}
	sameOrder(t, walked, all)
}

// sameOrder fails unless walked holds the purchases of all, in its order.
func sameOrder(t *testing.T, walked []uuid.UUID, all billing.Listing) {
	t.Helper()
	if len(walked) != len(all.Purchases) {
		t.Fatalf("walked %d purchases, want %d", len(walked), len(all.Purchases))
	}
	for i, r := range all.Purchases {
		if walked[i] != r.PurchaseID {
			t.Fatalf("row %d: walked %s, want %s (the one-page order)", i, walked[i], r.PurchaseID)
		}
	}
}

// embeddedClips makes one clip per title, embedded by e.
func embeddedClips(t *testing.T, pool *pgxpool.Pool, e *embed.Builtin, titles ...string) []uuid.UUID {
	t.Helper()
	ctx := context.Background()
	vids := billingtest.Videos(t, pool, len(titles), "easy")
	cat := wiringtest.Over(t, pool).Catalog
	for i, v := range vids {
		if _, err := pool.Exec(ctx, `UPDATE videos SET title = $2 WHERE id = $1`, v, titles[i]); err != nil {
			t.Fatal(err)
		}
		vec, _ := e.Embed(ctx, embed.Document, []string{titles[i]})
		if err := cat.StoreEmbeddings(ctx, e.Model(), []catalog.Embedding{{ID: v, Vector: vec[0]}}); err != nil {
			t.Fatal(err)
		}
	}
	return vids
}
