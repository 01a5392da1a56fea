package clients_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/uuid"

	"broll/billing/billingtest"
	"broll/clients/go/brollclient"
	"broll/internal/money"
	"broll/wiring/wiringtest"
)

// Amounts that a float32 or a naive float-to-cents conversion gets wrong:
// one cent, ten cents, 0.29 (29.999... when multiplied by 100), 19.99,
// 1234567.89, 9999999.99 and the largest amount the service lets anyone
// name (money.MaxCents, also the largest opening balance).
var awkwardCents = []int64{1, 10, 29, 1999, 123456789, 999999999, int64(money.MaxCents)}

// moneyCase is one amount: a clip priced at it and, per client, an account
// whose balance is exactly that amount.
type moneyCase struct {
	Cents int64     `json:"cents"`
	Video uuid.UUID `json:"video"`
	GoKey string    `json:"-"`
	TSKey string    `json:"key"`
}

// Money both ways through both clients against a live node: the balance
// and the price read back to the exact cents, and the amount sent as
// expected_total is the one the service computes (a cent off is 409
// price_changed), after which the balance is exactly zero.
func TestMoneyRoundTripsThroughBothClients(t *testing.T) {
	t.Parallel()
	n := startNode(t)
	ctx := context.Background()
	tiers := wiringtest.Over(t, n.pool).Catalog
	cases := make([]moneyCase, len(awkwardCents))
	for i, c := range awkwardCents {
		tier := fmt.Sprintf("money_%d", i)
		if _, err := tiers.SetTier(ctx, tier, money.Cents(c)); err != nil {
			t.Fatal(err)
		}
		cases[i] = moneyCase{Cents: c, Video: billingtest.Videos(t, n.pool, 1, tier)[0],
			GoKey: billingtest.NewAccount(t, n.pool, billingtest.AccountOpts{Credits: money.Cents(c)}).RootKey.Secret,
			TSKey: billingtest.NewAccount(t, n.pool, billingtest.AccountOpts{Credits: money.Cents(c)}).RootKey.Secret}
	}

	t.Run("go", func(t *testing.T) {
		for _, mc := range cases {
			c, err := brollclient.NewClientWithResponses(n.url, bearer(mc.GoKey))
			if err != nil {
				t.Fatal(err)
			}
			bal, err := c.GetBalanceWithResponse(ctx)
			if err != nil || bal.JSON200 == nil {
				t.Fatalf("balance: %v %s", err, body(bal))
			}
			if got := brollclient.Cents(bal.JSON200.Balance); got != mc.Cents {
				t.Errorf("balance of %s read as %d cents (%v)", brollclient.FormatCents(mc.Cents), got, bal.JSON200.Balance)
			}
			v, err := c.GetVideoWithResponse(ctx, mc.Video)
			if err != nil || v.JSON200 == nil {
				t.Fatalf("video: %v %s", err, body(v))
			}
			if got := brollclient.Cents(v.JSON200.Price); got != mc.Cents {
				t.Errorf("price of %s read as %d cents (%v)", brollclient.FormatCents(mc.Cents), got, v.JSON200.Price)
			}
			expected := brollclient.Dollars(mc.Cents)
			bought, err := c.PurchaseVideosWithResponse(ctx, nil, brollclient.PurchaseRequest{VideoIds: []uuid.UUID{mc.Video}, ExpectedTotal: &expected})
			if err != nil || bought.JSON200 == nil {
				t.Fatalf("purchase at %s: %v %s %s", brollclient.FormatCents(mc.Cents), err, body(bought), bought.Body)
			}
			r := bought.JSON200
			if brollclient.Cents(r.TotalCharged) != mc.Cents || brollclient.Cents(r.Purchases[0].PricePaid) != mc.Cents || brollclient.Cents(r.Balance) != 0 {
				t.Errorf("purchase at %s: charged %v, paid %v, balance after %v", brollclient.FormatCents(mc.Cents), r.TotalCharged, r.Purchases[0].PricePaid, r.Balance)
			}
		}
	})

	t.Run("typescript", func(t *testing.T) {
		js, err := json.Marshal(cases)
		if err != nil {
			t.Fatal(err)
		}
		node(t, "money.mjs", "BROLL_URL="+n.url, "BROLL_MONEY_CASES="+string(js))
	})
}
