package api

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"broll/billing/billingtest"
	"broll/clients/go/brollclient"
	"broll/internal/admission"
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

// TestListOwnershipIsCopiedUnderThePass: the node's copy of what a key
// owns answers its pages while the pass's version of what the key owns is
// the one it was made under, and only then. A purchase row written past
// the purchase statement (no hold, no new version: a hand-made INSERT) is
// not seen through a pass of that version, which shows the copy is used;
// a read without a pass sees it at once, and a purchase through the API,
// which gives the key's subject a new version, makes every later pass see
// both.
func TestListOwnershipIsCopiedUnderThePass(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	ctx := context.Background()
	g := e.nodes[0].g
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 10000})
	buyer := acct.CustomerKey(t, e.pool, "buyer")
	vids := billingtest.Videos(t, e.pool, 2, "easy")
	admit := func(t *testing.T) admission.Pass {
		t.Helper()
		p, err := g.Auth.Authenticate(ctx, buyer.Secret, false)
		if err != nil {
			t.Fatal(err)
		}
		d, err := g.Gate.Admit(ctx, p.Caller())
		if err != nil || !d.Allowed {
			t.Fatalf("admission: %+v %v", d, err)
		}
		return d.Pass
	}
	owned := func(t *testing.T, pass admission.Pass) int {
		t.Helper()
		o, err := g.Catalog.OwnershipsFor(ctx, buyer.ID, vids, pass)
		if err != nil {
			t.Fatal(err)
		}
		return len(o)
	}
	if n := owned(t, admit(t)); n != 0 {
		t.Fatalf("before any purchase: %d owned", n)
	}
	if _, err := e.pool.Exec(ctx, `INSERT INTO purchases (account_id, api_key_id, video_id, price_cents, tier)
		VALUES ($1, $2, $3, 500, 'easy')`, acct.ID, buyer.ID, vids[0]); err != nil {
		t.Fatal(err)
	}
	if n := owned(t, admit(t)); n != 0 {
		t.Errorf("a pass of the same version: %d owned, want the copy's 0", n)
	}
	if n := owned(t, admission.Pass{}); n != 1 {
		t.Errorf("without a pass: %d owned, want 1", n)
	}
	e.buy(t, 0, buyer.Secret, vids[1])
	if n := owned(t, admit(t)); n != 2 {
		t.Errorf("after a purchase through the API: %d owned, want 2", n)
	}
}
