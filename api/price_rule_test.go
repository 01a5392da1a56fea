package api

import (
	"fmt"
	"testing"

	"github.com/google/uuid"

	"broll/billing/billingtest"
	"broll/clients/go/brollclient"
	"broll/internal/money"
)

// TestOnePriceEveryPath: a clip's price is its tier's, written in one place
// (migrations/functions/clip_price.sql), and every path that shows or
// charges it agrees after each change of the tier: the clip read, the list
// (filtered by the tier, sorted by price), a dry-run quote, the charge and
// the purchase record, for clips made before and after the change.
func TestOnePriceEveryPath(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	ctx := t.Context()
	tier := fmt.Sprintf("rule_%d", uuid.New().ID()%1000000)
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 1000000})
	buyer := acct.CustomerKey(t, e.pool, "buyer")

	for i, price := range []money.Cents{700, 1250, 0, 333} {
		if _, err := e.ctl.Catalog.SetTier(ctx, tier, price); err != nil {
			t.Fatal(err)
		}
		dollars := float64(price) / 100
		// Two clips made before this change (or at the first), one after.
		clips := billingtest.Videos(t, e.pool, 1, tier)
		if i == 0 {
			clips = append(clips, billingtest.Videos(t, e.pool, 1, tier)...)
		}
		clips = append(clips, billingtest.Videos(t, e.pool, 1, tier)...)
		t.Run(fmt.Sprintf("price %d", price), func(t *testing.T) {
			for _, id := range clips {
				v := expect[brollclient.Video](t, e.do(t, 0, "GET", "/api/v1/broll/"+id.String(), buyer.Secret, nil), 200)
				if v.Price != dollars {
					t.Errorf("clip read: %v, want %v", v.Price, dollars)
				}
			}
			l := expect[brollclient.VideoList](t, e.do(t, 0, "GET", "/api/v1/broll?difficulty="+tier+"&sort_by=price&limit=100", buyer.Secret, nil), 200)
			if len(l.Videos) == 0 {
				t.Fatal("the list shows none of the tier's clips")
			}
			for _, v := range l.Videos {
				if v.Price != dollars {
					t.Errorf("list: clip %s at %v, want %v", v.Id, v.Price, dollars)
				}
			}
			id := clips[len(clips)-1]
			q := e.do(t, 0, "POST", "/api/v1/broll/purchase", buyer.Secret, map[string]any{"video_ids": []uuid.UUID{id}, "dry_run": true})
			if r := expect[brollclient.PurchaseResult](t, q, 200); r.TotalCharged != dollars {
				t.Errorf("quote: %v, want %v", r.TotalCharged, dollars)
			}
			if r := e.buy(t, 0, buyer.Secret, id); r.TotalCharged != dollars {
				t.Errorf("charge: %v, want %v", r.TotalCharged, dollars)
			}
			var paid int64
			if err := e.pool.QueryRow(ctx, `SELECT price_cents FROM purchases WHERE api_key_id = $1 AND video_id = $2`, buyer.ID, id).Scan(&paid); err != nil {
				t.Fatal(err)
			}
			if money.Cents(paid) != price {
				t.Errorf("purchase record: %d cents, want %d", paid, price)
			}
		})
	}
}
