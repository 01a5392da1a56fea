package api

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"broll/billing/billingtest"
	"broll/clients/go/brollclient"
)

// TestListsShowOwnershipAtOnceOnEveryNode: a node keeps the clips each key
// owns, so a page holding none of them is answered without reading
// purchases; the copy must never hide a purchase. A list on node 0 before
// the key buys anything, a purchase through node 1, and node 0's next list
// shows the clip owned with a link; a licence revoked afterwards (by the
// operator, no purchase) shows at once as owned without a link; and a key
// that bought nothing keeps seeing nothing owned.
func TestListsShowOwnershipAtOnceOnEveryNode(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{nodes: 2})
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 100000})
	buyer, sibling := acct.CustomerKey(t, e.pool, "buyer"), acct.CustomerKey(t, e.pool, "sibling")
	vids := billingtest.Videos(t, e.pool, 3, "easy")
	listed := func(t *testing.T, n int, secret string) map[uuid.UUID]brollclient.Video {
		t.Helper()
		l := expect[brollclient.VideoList](t, e.do(t, n, "GET", "/api/v1/broll?limit=100", secret, nil), 200)
		out := map[uuid.UUID]brollclient.Video{}
		for _, v := range l.Videos {
			out[v.Id] = v
		}
		return out
	}
	for _, secret := range []string{buyer.Secret, sibling.Secret} {
		for id, v := range listed(t, 0, secret) {
			if v.Owned {
				t.Fatalf("before any purchase: %s listed owned", id)
			}
		}
	}
	res := e.buy(t, 1, buyer.Secret, vids[0])
	seen := listed(t, 0, buyer.Secret)
	if v := seen[vids[0]]; !v.Owned || v.DownloadUrl == nil {
		t.Fatalf("node 0 after a purchase through node 1: owned %v, link %v; want owned with a link", v.Owned, v.DownloadUrl)
	}
	for _, id := range vids[1:] {
		if seen[id].Owned {
			t.Errorf("%s, not bought, listed owned", id)
		}
	}
	for id, v := range listed(t, 0, sibling.Secret) {
		if v.Owned {
			t.Errorf("the sibling, who bought nothing: %s listed owned", id)
		}
	}

	lic := res.Purchases[0].License
	if lic == nil {
		t.Fatal("the purchase carries no licence")
	}
	if _, err := e.ctl.Licenses.Revoke(context.Background(), lic.Id, "test"); err != nil {
		t.Fatal(err)
	}
	if v := listed(t, 0, buyer.Secret)[vids[0]]; !v.Owned || v.DownloadUrl != nil {
		t.Errorf("after its licence was revoked: owned %v, link %v; want owned without a link", v.Owned, v.DownloadUrl)
	}
}
