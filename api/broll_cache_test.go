package api

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"broll/billing/billingtest"
	"broll/catalog/catalogtest"
	"broll/clients/go/brollclient"
	"broll/internal/admission"
)

// TestClipChangesReachEveryNodeAtOnce: node 1 keeps the clip details it
// read; every change made elsewhere (node 0's ops API, the operator CLI's
// price change, the worker's probe, passed or failed) shows in node 1's
// next read, and so does a purchase made through node 0.
func TestClipChangesReachEveryNodeAtOnce(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{nodes: 2})
	ctx := context.Background()
	ops, err := e.ctl.Tenancy.CreateOpsKey(ctx, "content team")
	if err != nil {
		t.Fatal(err)
	}
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 10000})
	buyer := acct.CustomerKey(t, e.pool, "buyer")
	stranger := acct.CustomerKey(t, e.pool, "stranger")
	full, preview, thumb := e.clipFiles(t)
	id, other := uuid.New(), uuid.New()
	clips := []map[string]any{
		{"id": id.String(), "title": "Woman waving at the camera", "emotion": "happy", "gender": "female",
			"difficulty": "easy", "media_file": full, "preview_file": preview, "thumbnail_file": thumb},
		{"id": other.String(), "title": "Man reading a book", "emotion": "curious", "gender": "male",
			"difficulty": "hard", "media_file": full},
	}
	expect[brollclient.ImportResult](t, e.do(t, 0, "POST", "/api/ops/v1/videos", ops.Secret, clips), 200)
	catalogtest.MediaPassed(t, e.pool)
	clip := func(t *testing.T, key string, id uuid.UUID) brollclient.Video {
		t.Helper()
		return expect[brollclient.Video](t, e.do(t, 1, "GET", "/api/v1/broll/"+id.String(), key, nil), 200)
	}
	for _, key := range []string{buyer.Secret, stranger.Secret} {
		if v := clip(t, key, id); v.Price != 5 || v.Owned || deref(v.Retired) {
			t.Fatalf("first read on node 1: %+v", v)
		}
		clip(t, key, other)
	}

	t.Run("an import through node 0, then the probe", func(t *testing.T) {
		clips[0]["title"], clips[0]["difficulty"] = "Woman waving hello", "medium"
		expect[brollclient.ImportResult](t, e.do(t, 0, "POST", "/api/ops/v1/videos", ops.Secret, clips[:1]), 200)
		// The file imported again waits for the probe: off sale meanwhile.
		if r := e.do(t, 1, "GET", "/api/v1/broll/"+id.String(), stranger.Secret, nil); r.status != 404 {
			t.Errorf("clip waiting for its probe: %d %s", r.status, r.raw)
		}
		catalogtest.MediaPassed(t, e.pool, id)
		if v := clip(t, stranger.Secret, id); v.Title != "Woman waving hello" || v.Difficulty != "medium" || v.Price != 10 {
			t.Errorf("after the import: %q %s %v", v.Title, v.Difficulty, v.Price)
		}
	})

	t.Run("a price change by the operator", func(t *testing.T) {
		if _, err := e.ctl.Catalog.SetTier(ctx, "medium", 1250); err != nil {
			t.Fatal(err)
		}
		if v := clip(t, stranger.Secret, id); v.Price != 12.5 {
			t.Errorf("price after the tier changed: %v, want 12.5", v.Price)
		}
	})

	t.Run("a purchase through node 0", func(t *testing.T) {
		e.buy(t, 0, buyer.Secret, id)
		if v := clip(t, buyer.Secret, id); !v.Owned || v.DownloadUrl == nil || v.DownloadUrlExpiresAt == nil {
			t.Errorf("buyer's next read on node 1: owned %v, link %v", v.Owned, v.DownloadUrl)
		}
		if v := clip(t, stranger.Secret, id); v.Owned || v.DownloadUrl != nil {
			t.Errorf("another key sees the buyer's purchase: %+v", v)
		}
	})

	t.Run("a retirement through node 0", func(t *testing.T) {
		if r := e.do(t, 0, "DELETE", "/api/ops/v1/videos/"+id.String(), ops.Secret, nil); r.status != 200 {
			t.Fatalf("retire: %d %s", r.status, r.raw)
		}
		if r := e.do(t, 1, "GET", "/api/v1/broll/"+id.String(), stranger.Secret, nil); r.status != 404 {
			t.Errorf("retired clip for a key that never bought it: %d %s", r.status, r.raw)
		}
		if v := clip(t, buyer.Secret, id); !deref(v.Retired) || !v.Owned {
			t.Errorf("retired clip for its buyer: retired %v, owned %v", deref(v.Retired), v.Owned)
		}
	})

	t.Run("the worker finding the media unsound", func(t *testing.T) {
		if err := e.ctl.MediaJobs.MarkMediaFailed(ctx, other, "not a video"); err != nil {
			t.Fatal(err)
		}
		if r := e.do(t, 1, "GET", "/api/v1/broll/"+other.String(), stranger.Secret, nil); r.status != 404 {
			t.Errorf("clip with failed media: %d %s", r.status, r.raw)
		}
	})
}

// TestClipReadTrustsItsMarks: node 1 answers a clip read from its copies
// while the marks its admission read hold, without asking Postgres: a
// change written past the service (a plain UPDATE, which no mark tells of)
// does not show until a mark moves. While a writer holds the catalog's
// mark node 1 reads Postgres; and a purchase whose writer died between its
// commit and its release (a purchase row inserted by hand under a hold
// never released) shows on the buyer's next read all the same.
func TestClipReadTrustsItsMarks(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{nodes: 2})
	ctx := context.Background()
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 10000})
	buyer := acct.CustomerKey(t, e.pool, "buyer")
	id := billingtest.Videos(t, e.pool, 1, "easy")[0]
	clip := func(t *testing.T) brollclient.Video {
		t.Helper()
		return expect[brollclient.Video](t, e.do(t, 1, "GET", "/api/v1/broll/"+id.String(), buyer.Secret, nil), 200)
	}
	retitle := func(t *testing.T, title string) {
		t.Helper()
		if _, err := e.pool.Exec(ctx, `UPDATE videos SET title = $2 WHERE id = $1`, id, title); err != nil {
			t.Fatal(err)
		}
	}
	first := clip(t)

	t.Run("a copy answers while the marks hold", func(t *testing.T) {
		retitle(t, "Written by hand")
		if v := clip(t); v.Title != first.Title {
			t.Errorf("title %q: node 1 asked Postgres, want its copy's %q", v.Title, first.Title)
		}
	})

	t.Run("a held mark sends reads to Postgres", func(t *testing.T) {
		h := e.ctl.Gate.Hold(ctx, admission.Catalog)
		if v := clip(t); v.Title != "Written by hand" {
			t.Errorf("title while held: %q", v.Title)
		}
		// The writer's commit, after the hold and that read.
		retitle(t, "Committed under the hold")
		if v := clip(t); v.Title != "Committed under the hold" {
			t.Errorf("title committed while held: %q, a copy made under the hold answered", v.Title)
		}
		h.Release(ctx)
		if v := clip(t); v.Title != "Committed under the hold" {
			t.Errorf("title after the release: %q", v.Title)
		}
	})

	t.Run("a purchase whose writer died after its commit", func(t *testing.T) {
		e.ctl.Gate.Hold(ctx, admission.Owned(buyer.ID)) // never released
		if v := clip(t); v.Owned {
			t.Fatal("owned before any purchase")
		}
		if _, err := e.pool.Exec(ctx, `INSERT INTO purchases (account_id, api_key_id, video_id, price_cents, tier)
			VALUES ($1, $2, $3, 500, 'easy')`, acct.ID, buyer.ID, id); err != nil {
			t.Fatal(err)
		}
		if v := clip(t); !v.Owned || v.DownloadUrl == nil {
			t.Errorf("buyer's next read on node 1: owned %v, link %v", v.Owned, v.DownloadUrl)
		}
	})
}
