package api

import (
	"slices"
	"testing"

	"github.com/google/uuid"

	"broll/billing/billingtest"
	"broll/clients/go/brollclient"
)

// TestOneOwnershipEveryPath: who owns a clip is one rule
// (migrations/functions/owned.sql), and every path agrees with it on one
// table of keys: the clip read's owned flag, the list's owned filter (and
// its negation), and the purchase statement, whose quote is nothing for an
// owned clip and which answers it as already owned. The buyer owns it; its
// root key, a sibling customer of the same root and another account's key
// do not; a test key that bought the same clip owns its own copy.
func TestOneOwnershipEveryPath(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	a := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 100000})
	other := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 100000})
	buyer, sibling := a.CustomerKey(t, e.pool, "buyer"), a.CustomerKey(t, e.pool, "sibling")
	test := a.TestKey(t, e.pool, "sandbox")
	stranger := other.CustomerKey(t, e.pool, "stranger")
	vids := billingtest.Videos(t, e.pool, 2, "easy") // 5.00 each
	clip := vids[0]
	e.buy(t, 0, buyer.Secret, clip)
	e.buy(t, 0, test.Secret, clip)

	cases := []struct {
		name   string
		secret string
		owns   bool
	}{
		{"buyer", buyer.Secret, true},
		{"test key that bought it too", test.Secret, true},
		{"the buyer's root key", a.RootKey.Secret, false},
		{"a sibling customer", sibling.Secret, false},
		{"another account's key", stranger.Secret, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := expect[brollclient.Video](t, e.do(t, 0, "GET", "/api/v1/broll/"+clip.String(), c.secret, nil), 200)
			if v.Owned != c.owns {
				t.Errorf("clip read: owned %v, want %v", v.Owned, c.owns)
			}
			for filter, want := range map[string]bool{"true": c.owns, "false": !c.owns} {
				l := expect[brollclient.VideoList](t, e.do(t, 0, "GET", "/api/v1/broll?owned="+filter+"&limit=100", c.secret, nil), 200)
				listed := slices.ContainsFunc(l.Videos, func(v brollclient.Video) bool { return v.Id == clip })
				if listed != want {
					t.Errorf("list owned=%s: lists the clip %v, want %v", filter, listed, want)
				}
			}
			q := expect[brollclient.PurchaseResult](t, e.do(t, 0, "POST", "/api/v1/broll/purchase", c.secret,
				map[string]any{"video_ids": []uuid.UUID{clip}, "dry_run": true}), 200)
			wantQuote := 5.0
			if c.owns {
				wantQuote = 0
			}
			if q.TotalCharged != wantQuote || len(q.Purchases) != 1 || q.Purchases[0].AlreadyOwned != c.owns {
				t.Errorf("quote: %v charged, already_owned %v; want %v, %v", q.TotalCharged, q.Purchases[0].AlreadyOwned, wantQuote, c.owns)
			}
		})
	}
}
