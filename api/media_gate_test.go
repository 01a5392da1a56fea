package api

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/uuid"

	"broll/billing/billingtest"
	"broll/catalog"
	"broll/catalog/media"
	"broll/catalog/mediajobs"
	"broll/clients/go/brollclient"
	"broll/embed"
	"broll/internal/testkit"
)

// processMedia runs the media step of the worker for ids, as its handler
// does: the real probe, and a file the probe refuses marked failed with
// its reason.
func processMedia(t *testing.T, jobs *mediajobs.Service, ids ...uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	for _, id := range ids {
		err := jobs.ProcessMedia(ctx, id)
		var unreadable *media.UnreadableError
		if errors.As(err, &unreadable) {
			err = jobs.MarkMediaFailed(ctx, id, unreadable.Reason)
		}
		if err != nil {
			t.Fatalf("process media of %s: %v", id, err)
		}
	}
}

// embedClips stores the built-in embedder's vectors for ids, as the worker would.
func embedClips(t *testing.T, svc *catalog.Service, ids ...uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	inputs, err := svc.EmbeddingInputs(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	b := embed.NewBuiltin()
	embs := make([]catalog.Embedding, len(inputs))
	for i, in := range inputs {
		v, err := b.Embed(ctx, embed.Document, []string{in.Text})
		if err != nil {
			t.Fatal(err)
		}
		embs[i] = catalog.Embedding{ID: in.ID, Vector: v[0]}
	}
	if err := svc.StoreEmbeddings(ctx, b.Model(), embs); err != nil {
		t.Fatal(err)
	}
}

// TestOnlySoundMediaIsSold: a text file posted as an .mp4 goes through the
// real import and the real probe; it is refused, and from then on no
// customer surface lists, shows or sells it, while content operations see
// it failed with the probe's reason. A real video beside it appears once
// its file has passed the probe, and not before.
func TestOnlySoundMediaIsSold(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	ctx := context.Background()
	ops, err := e.ctl.Tenancy.CreateOpsKey(ctx, "content team")
	if err != nil {
		t.Fatal(err)
	}
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 10000})
	cust := acct.CustomerKey(t, e.pool, "alice")

	fake := filepath.Join(e.cfg.ImportDir, "impostor.mp4")
	if err := os.WriteFile(fake, []byte("this is a text file, not a video\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sound := filepath.Join(e.cfg.ImportDir, "real.mp4")
	b, err := os.ReadFile(testkit.RenderVideo(t, 320, 180, 1))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sound, b, 0o644); err != nil {
		t.Fatal(err)
	}
	bad, good := uuid.New(), uuid.New()
	// Figures given by hand do not spare a clip the probe.
	clips := []map[string]any{
		{"id": bad.String(), "title": "Zebra crossing impostor", "emotion": "happy", "gender": "female",
			"difficulty": "easy", "media_file": fake, "media_type": "video", "orientation": "horizontal",
			"duration_seconds": 10, "width": 1920, "height": 1080, "fps": 30},
		{"id": good.String(), "title": "Zebra crossing at dawn", "emotion": "happy", "gender": "female",
			"difficulty": "easy", "media_file": sound},
	}
	expect[brollclient.ImportResult](t, e.do(t, 0, "POST", "/api/ops/v1/videos", ops.Secret, clips), 200)
	svc := e.ctl.Catalog
	embedClips(t, svc, bad, good)

	listed := func(t *testing.T, query string) []string {
		t.Helper()
		var ids []string
		for _, v := range expect[brollclient.VideoList](t, e.do(t, 0, "GET", "/api/v1/broll?"+query, cust.Secret, nil), 200).Videos {
			ids = append(ids, v.Id.String())
		}
		return ids
	}
	surfaces := map[string]string{
		"list":     "",
		"keyword":  "search=zebra",
		"semantic": "semantic_search=" + url.QueryEscape("zebra crossing"),
		"filtered": "emotion=happy&media_type=video",
	}

	// Before the probe neither clip is for sale.
	for name, q := range surfaces {
		if got := listed(t, q); len(got) != 0 {
			t.Errorf("before processing, %s lists %v", name, got)
		}
	}
	if r := e.do(t, 0, "GET", "/api/v1/broll/"+good.String(), cust.Secret, nil); r.status != 404 {
		t.Errorf("unprobed clip details: %d %s", r.status, r.raw)
	}

	processMedia(t, e.ctl.MediaJobs, bad, good)
	// The probe filled the sound clip's orientation, which its text holds:
	// the worker embeds it again.
	embedClips(t, svc, good)

	t.Run("customers never see the unsound clip", func(t *testing.T) {
		for name, q := range surfaces {
			if got := listed(t, q); !slices.Equal(got, []string{good.String()}) {
				t.Errorf("%s lists %v, want only %s", name, got, good)
			}
		}
		if r := e.do(t, 0, "GET", "/api/v1/broll/"+bad.String(), cust.Secret, nil); r.status != 404 || problemOf(t, r).Code != "not_found" {
			t.Errorf("details of the unsound clip: %d %s", r.status, r.raw)
		}
		if r := e.do(t, 0, "GET", "/api/v1/broll/"+good.String(), cust.Secret, nil); r.status != 200 {
			t.Errorf("details of the sound clip: %d %s", r.status, r.raw)
		}
		f := expect[brollclient.Filters](t, e.do(t, 0, "GET", "/api/v1/broll/filters", cust.Secret, nil), 200)
		for _, v := range f.Emotion {
			if v.Value == "happy" && v.Count != 1 {
				t.Errorf("filters count happy = %d, want 1", v.Count)
			}
		}
		cs := mcpMustConnect(t, e.serveLoopback(t), cust.Secret)
		found := decode[brollclient.VideoList](t, callToolOK(t, cs, "search_videos", map[string]any{"search": "zebra"}))
		if len(found.Videos) != 1 || found.Videos[0].Id != good {
			t.Errorf("MCP search_videos: %+v", found.Videos)
		}
		if res, out := callTool(t, cs, "get_video", map[string]any{"video_id": bad.String()}); !res.IsError ||
			errorOf[toolError](t, out).Code != "not_found" {
			t.Errorf("MCP get_video of the unsound clip: %s", out.raw)
		}
	})

	t.Run("a purchase of it is unknown and charges nothing", func(t *testing.T) {
		for _, ids := range [][]uuid.UUID{{bad}, {good, bad}} {
			r := e.do(t, 0, "POST", "/api/v1/broll/purchase", cust.Secret, map[string]any{"video_ids": ids})
			if r.status != 404 || problemOf(t, r).Code != "not_found" {
				t.Errorf("purchase %v: %d %s", ids, r.status, r.raw)
			}
		}
		if bal := expect[brollclient.Balance](t, e.do(t, 0, "GET", "/api/v1/balance", cust.Secret, nil), 200); bal.Balance != 100 {
			t.Errorf("balance after refused purchases = %v, want 100", bal.Balance)
		}
		var n int
		if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM purchases`).Scan(&n); err != nil || n != 0 {
			t.Errorf("purchases written: %d, %v", n, err)
		}
		if got := e.buy(t, 0, cust.Secret, good); got.TotalCharged != 5 {
			t.Errorf("sound clip charged %v, want 5", got.TotalCharged)
		}
	})

	t.Run("content operations see it failed with the reason", func(t *testing.T) {
		v := expect[brollclient.ClipState](t, e.do(t, 0, "GET", "/api/ops/v1/videos/"+bad.String(), ops.Secret, nil), 200)
		if v.MediaStatus != "failed" || v.Listed || v.MediaError == nil || *v.MediaError == "" || v.RetiredAt != nil {
			t.Errorf("ops view of the unsound clip: %+v", v)
		}
		if v := expect[brollclient.ClipState](t, e.do(t, 0, "GET", "/api/ops/v1/videos/"+good.String(), ops.Secret, nil), 200); v.MediaStatus != "ready" || !v.Listed {
			t.Errorf("ops view of the sound clip: %+v", v)
		}
		if r := e.do(t, 0, "GET", "/api/ops/v1/videos/"+bad.String(), cust.Secret, nil); r.status != 403 {
			t.Errorf("a customer key reading the ops view: %d", r.status)
		}
		if r := e.do(t, 0, "GET", "/api/ops/v1/videos/"+uuid.NewString(), ops.Secret, nil); r.status != 404 {
			t.Errorf("ops view of an unknown clip: %d", r.status)
		}
		st, err := svc.Status(ctx, embed.NewBuiltin().Model())
		if err != nil {
			t.Fatal(err)
		}
		if st.Media.Failed != 1 || len(st.Media.FailedClips) != 1 || st.Media.FailedClips[0].ID != bad || st.Media.FailedClips[0].Reason == "" {
			t.Errorf("clips status: %+v", st.Media)
		}
	})
}
