package billing_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"broll/billing"
	"broll/billing/billingtest"
	"broll/internal/paging"
	"broll/internal/testkit"
	"broll/tenancy"
)

// BenchmarkListPurchasesRoot lists the first page (and the summary over
// every match) for one of two root keys of an account, each with 50
// customers of 200 purchases: the root sees 10,000 of the account's 20,000.
// Run: go test -run '^$' -bench ListPurchasesRoot -benchtime 200x ./billing/
func BenchmarkListPurchasesRoot(b *testing.B) {
	pool, _ := testkit.NewPool(b)
	ctx := context.Background()
	svc := newService(b, pool)
	a := billingtest.NewAccount(b, pool, billingtest.AccountOpts{})
	sibling := a.AnotherRoot(b, pool, "second integration")
	for i := 0; i < 50; i++ {
		a.CustomerKey(b, pool, fmt.Sprintf("a-%d", i))
		sibling.CustomerKey(b, pool, fmt.Sprintf("b-%d", i))
	}
	vids := billingtest.Videos(b, pool, 200, "easy")
	if _, err := pool.Exec(ctx, `
		INSERT INTO purchases (account_id, api_key_id, video_id, price_cents, tier, purchased_at)
		SELECT $1, k.id, v, 500, 'easy', now() - random() * interval '60 days'
		FROM api_keys k, unnest($2::uuid[]) AS v
		WHERE k.account_id = $1 AND k.kind = 'customer'`, a.ID, vids); err != nil {
		b.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `ANALYZE purchases; ANALYZE api_keys`); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		lp   billing.ListParams
	}{
		{"page1", billing.ListParams{}},
		{"page20", billing.ListParams{Page: paging.Request{Offset: 19 * 50}}},
		{"last30days", billing.ListParams{StartDate: time.Now().AddDate(0, 0, -30).Format("2006-01-02")}},
		{"page20_by_cursor", billing.ListParams{Page: paging.Request{Cursor: cursorTo(b, svc, a.Root, 20)}}},
	} {
		q, err := bc.lp.Parse(a.Root)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				l, err := svc.ListPurchases(ctx, a.Root, q, nil)
				if err != nil || l.Total == 0 {
					b.Fatalf("%v, %d purchases", err, l.Total)
				}
			}
		})
	}
	b.Run("month_to_date", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := svc.Summary(ctx, a.Root, time.Now()); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// cursorTo follows next_cursor to the given page of p's purchases, to
// measure the page a cursor reaches against the same page by offset.
func cursorTo(b *testing.B, svc *billing.Service, p tenancy.Principal, page int) string {
	b.Helper()
	cursor := ""
	for i := 1; i < page; i++ {
		q, err := billing.ListParams{Page: paging.Request{Cursor: cursor}}.Parse(p)
		if err != nil {
			b.Fatal(err)
		}
		l, err := svc.ListPurchases(context.Background(), p, q, nil)
		if err != nil || l.NextCursor == "" {
			b.Fatalf("page %d: %v, no next_cursor", i, err)
		}
		cursor = l.NextCursor
	}
	return cursor
}
