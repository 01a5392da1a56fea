package api

import (
	"context"
	"slices"
	"testing"
	"time"

	"broll/billing/billingtest"
	"broll/clients/go/brollclient"
	"broll/internal/config"
)

// TestListsFromListingsSeeEveryChangeAtOnce: once the catalog has kept one
// version for the quiet time, a node answers lists from its own order of
// the catalog (its listings). A row changed by hand, which moves no
// version, does not reorder them: that shows they answer. A clip retired
// and a tier repriced through the catalog, which move the version, show on
// the next list of every node, and the listings made again afterwards hold
// them.
func TestListsFromListingsSeeEveryChangeAtOnce(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{nodes: 2, configure: func(c *config.Config) { c.ListingsQuiet = time.Millisecond }})
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 100000})
	key := acct.CustomerKey(t, e.pool, "lister")
	vids := billingtest.Videos(t, e.pool, 6, "easy")
	list := func(t *testing.T, n int) []brollclient.Video {
		t.Helper()
		return expect[brollclient.VideoList](t, e.do(t, n, "GET", "/api/v1/broll?limit=100", key.Secret, nil), 200).Videos
	}
	first := func(vs []brollclient.Video) bool { return len(vs) > 0 && vs[0].Id == vids[0] }
	moveByHand := func(t *testing.T, newest bool) {
		t.Helper()
		at := "now() - interval '1 year'"
		if newest {
			at = "now() + interval '1 year'"
		}
		if _, err := e.pool.Exec(context.Background(), `UPDATE videos SET created_at = `+at+` WHERE id = $1`, vids[0]); err != nil {
			t.Fatal(err)
		}
	}
	// fromListings waits until node n answers from listings: a clip moved
	// by hand to the other end of the order stays where it was.
	fromListings := func(t *testing.T, n int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			was := first(list(t, n))
			moveByHand(t, !was)
			if first(list(t, n)) == was {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("node %d never answered a list from its listings", n)
	}
	fromListings(t, 0)
	fromListings(t, 1)

	ctx := context.Background()
	if _, err := e.ctl.Catalog.Retire(ctx, vids[1]); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ctl.Catalog.SetTier(ctx, "easy", 777); err != nil {
		t.Fatal(err)
	}
	check := func(t *testing.T, n int, when string) {
		t.Helper()
		vs := list(t, n)
		if slices.ContainsFunc(vs, func(v brollclient.Video) bool { return v.Id == vids[1] }) {
			t.Fatalf("node %d %s: the retired clip is listed", n, when)
		}
		for _, v := range vs {
			if slices.Contains(vids, v.Id) && v.Price != 7.77 {
				t.Fatalf("node %d %s: %s listed at %v, want 7.77", n, when, v.Id, v.Price)
			}
		}
		if len(vs) != len(vids)-1 {
			t.Fatalf("node %d %s: %d clips listed, want %d", n, when, len(vs), len(vids)-1)
		}
	}
	for n := range 2 {
		check(t, n, "right after the changes")
	}
	fromListings(t, 0)
	check(t, 0, "from the listings made again")
}

// TestKeywordWalksFromCopiesSeeEveryChangeAtOnce: on a catalog that has
// kept one version, a keyword search served by the walk takes its clips
// from the node's copies under that version (a row changed by hand, which
// moves no version, still shows as it was: that shows the copies answer).
// A clip retired and a tier repriced through the catalog show on the next
// search of every node, and again once the node answers from copies made
// afterwards.
func TestKeywordWalksFromCopiesSeeEveryChangeAtOnce(t *testing.T) {
	t.Parallel()
	// A rate limit no loop below reaches, however slow the machine.
	e := setup(t, envOpts{nodes: 2, perMinute: 100000, configure: func(c *config.Config) { c.ListingsQuiet = time.Millisecond }})
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 100000})
	key := acct.CustomerKey(t, e.pool, "searcher")
	vids := billingtest.Videos(t, e.pool, 6, "easy")
	// Every clip's title has "clip": with a limit of 2 the walk finds more
	// candidates than the page and serves it.
	search := func(t *testing.T, n int) []brollclient.Video {
		t.Helper()
		return expect[brollclient.VideoList](t, e.do(t, n, "GET", "/api/v1/broll?search=clip&limit=2", key.Secret, nil), 200).Videos
	}
	ctx := context.Background()
	fromCopies := func(t *testing.T, n int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for i := 0; time.Now().Before(deadline); i++ {
			score := 1 + i%100
			top := search(t, n)[0].Id
			if _, err := e.pool.Exec(ctx, `UPDATE videos SET virality_score = $2 WHERE id = $1`, top, score); err != nil {
				t.Fatal(err)
			}
			if v := search(t, n)[0]; v.Id == top && (v.ViralityScore == nil || *v.ViralityScore != score) {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("node %d never answered a keyword walk from its copies", n)
	}
	fromCopies(t, 0)
	fromCopies(t, 1)

	top := search(t, 0)[0].Id
	if _, err := e.ctl.Catalog.Retire(ctx, top); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ctl.Catalog.SetTier(ctx, "easy", 777); err != nil {
		t.Fatal(err)
	}
	check := func(t *testing.T, n int, when string) {
		t.Helper()
		vs := search(t, n)
		if len(vs) != 2 {
			t.Fatalf("node %d %s: %d clips, want 2", n, when, len(vs))
		}
		for _, v := range vs {
			if v.Id == top {
				t.Fatalf("node %d %s: the retired clip is found", n, when)
			}
			if !slices.Contains(vids, v.Id) || v.Price != 7.77 {
				t.Fatalf("node %d %s: %s found at %v, want 7.77", n, when, v.Id, v.Price)
			}
		}
	}
	for n := range 2 {
		check(t, n, "right after the changes")
	}
	fromCopies(t, 0)
	check(t, 0, "from copies made again")
}
