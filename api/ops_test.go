package api

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"broll/billing/billingtest"
	"broll/catalog/catalogtest"
	"broll/clients/go/brollclient"
)

func TestOpsVideosOverHTTP(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	ops, err := e.ctl.Tenancy.CreateOpsKey(context.Background(), "content team")
	if err != nil {
		t.Fatal(err)
	}
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 10000})
	buyer := acct.CustomerKey(t, e.pool, "buyer")
	stranger := acct.CustomerKey(t, e.pool, "stranger")
	full, preview, thumb := e.clipFiles(t)
	id := uuid.NewString()
	clips := []map[string]any{
		{"id": id, "title": "Woman waving at the camera", "emotion": "happy", "gender": "female",
			"difficulty": "easy", "media_file": full, "preview_file": preview, "thumbnail_file": thumb,
			"tags": []string{"hello"}, "model": map[string]any{"id": "m-9", "name": "Nia"}},
		{"title": "Man reading a book", "emotion": "curious", "gender": "male", "difficulty": "hard",
			"media_file": full},
	}

	// Only ops keys may write the catalog.
	for who, key := range map[string]string{"root key": acct.RootKey.Secret, "customer key": buyer.Secret} {
		r := e.do(t, 0, "POST", "/api/ops/v1/videos", key, clips)
		if p := problemOf(t, r); r.status != 403 || p.Code != "insufficient_scope" || deref(p.RequiredScope) != "catalog:write" {
			t.Errorf("%s: %d %s", who, r.status, r.raw)
		}
		r = e.do(t, 0, "DELETE", "/api/ops/v1/videos/"+id, key, nil)
		if r.status != 403 {
			t.Errorf("%s retiring: %d %s", who, r.status, r.raw)
		}
	}
	if r := e.do(t, 0, "POST", "/api/ops/v1/videos", "", clips); r.status != 401 {
		t.Errorf("no key: %d", r.status)
	}

	// Both new clips go to the embedding queue, as on a production node.
	r := e.do(t, 0, "POST", "/api/ops/v1/videos", ops.Secret, clips)
	if got := expect[brollclient.ImportResult](t, r, 200); got != (brollclient.ImportResult{Created: 2, Queued: 2}) || r.header.Get("X-RateLimit-Limit") == "" {
		t.Fatalf("create: %s", r.raw)
	}
	catalogtest.MediaPassed(t, e.pool)
	v := expect[brollclient.Video](t, e.do(t, 0, "GET", "/api/v1/broll/"+id, buyer.Secret, nil), 200)
	if v.Title != "Woman waving at the camera" || v.ThumbnailUrl == nil {
		t.Fatalf("created clip: %+v", v)
	}

	clips[0]["title"] = "Woman waving hello at the camera"
	r = e.do(t, 0, "POST", "/api/ops/v1/videos", ops.Secret, clips[:1])
	if got := expect[brollclient.ImportResult](t, r, 200); got.Created != 0 || got.Updated != 1 {
		t.Fatalf("update: %s", r.raw)
	}

	// All or nothing, every problem listed by array index.
	bad := []any{
		map[string]any{"title": "Fine clip", "emotion": "happy", "gender": "male", "difficulty": "easy", "media_file": full},
		map[string]any{"title": "Bad emotion", "emotion": "joyful", "gender": "male", "difficulty": "easy", "media_file": full},
		map[string]any{"title": "Typo", "emotion": "happy", "gender": "male", "difficulty": "easy", "media_file": full, "orientaton": "vertical"},
		map[string]any{"title": "Missing file", "emotion": "happy", "gender": "male", "difficulty": "easy", "media_file": "/nonexistent/clip.mp4"},
		"not an object",
	}
	r = e.do(t, 0, "POST", "/api/ops/v1/videos", ops.Secret, bad)
	p := problemOf(t, r)
	if r.status != 400 || p.Code != "invalid_request" {
		t.Fatalf("bad clips: %d %s", r.status, r.raw)
	}
	got := map[int]string{}
	for _, x := range deref(p.Errors) {
		got[x.Index] = deref(x.Field)
	}
	if len(got) != 2 || got[2] != "orientaton" || got[4] != "" {
		t.Fatalf("decode errors: %+v", deref(p.Errors))
	}
	bad = bad[:4]
	r = e.do(t, 0, "POST", "/api/ops/v1/videos", ops.Secret, []any{bad[0], bad[1], bad[3]})
	if errs := deref(problemOf(t, r).Errors); r.status != 400 || len(errs) != 2 || errs[0].Index != 1 ||
		deref(errs[0].Field) != "emotion" || deref(errs[1].Field) != "media_file" {
		t.Fatalf("validation errors: %d %s", r.status, r.raw)
	}
	if n := decode[brollclient.VideoList](t, e.do(t, 0, "GET", "/api/v1/broll?search=fine", buyer.Secret, nil)).Videos; len(n) != 0 {
		t.Fatal("a rejected import wrote a clip")
	}

	// Only files below BROLL_IMPORT_DIR: an ops key cannot turn any file the
	// process reads into a clip, by absolute path, by "..", or through a
	// symbolic link.
	outside := filepath.Join(t.TempDir(), "secret.avi")
	if err := os.WriteFile(outside, []byte("RIFF-not-for-ops"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(e.cfg.ImportDir, "link.avi")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(e.cfg.ImportDir, outside)
	for _, path := range []string{outside, rel, link, "/etc/hostname"} {
		clip := map[string]any{"title": "Escape", "emotion": "happy", "gender": "male", "difficulty": "easy", "media_file": path}
		r := e.do(t, 0, "POST", "/api/ops/v1/videos", ops.Secret, []any{clip})
		if errs := deref(problemOf(t, r).Errors); r.status != 400 || len(errs) != 1 || !strings.Contains(errs[0].Message, "outside the import directory") {
			t.Errorf("media_file %q: %d %s", path, r.status, r.raw)
		}
	}
	inside := map[string]any{"title": "Relative path", "emotion": "happy", "gender": "male", "difficulty": "easy", "media_file": filepath.Base(full)}
	if r := e.do(t, 0, "POST", "/api/ops/v1/videos", ops.Secret, []any{inside}); r.status != 200 {
		t.Errorf("a path relative to the import directory: %d %s", r.status, r.raw)
	}
	for _, body := range []any{`{"title": "x"}`, `[]`, `[{"title": `, ""} {
		if r := e.do(t, 0, "POST", "/api/ops/v1/videos", ops.Secret, body); r.status != 400 {
			t.Errorf("body %v: %d %s", body, r.status, r.raw)
		}
	}

	// Retiring: idempotent, out of the catalog, kept by its buyer.
	catalogtest.MediaPassed(t, e.pool)
	e.buy(t, 0, buyer.Secret, uuid.MustParse(id))
	ret := expect[brollclient.Retired](t, e.do(t, 0, "DELETE", "/api/ops/v1/videos/"+id, ops.Secret, nil), 200)
	if ret.Id.String() != id || ret.RetiredAt.IsZero() || ret.AlreadyRetired {
		t.Fatalf("retire: %+v", ret)
	}
	if again := expect[brollclient.Retired](t, e.do(t, 0, "DELETE", "/api/ops/v1/videos/"+id, ops.Secret, nil), 200); !again.AlreadyRetired || !again.RetiredAt.Equal(ret.RetiredAt) {
		t.Fatalf("retire again: %+v", again)
	}
	if r := e.do(t, 0, "DELETE", "/api/ops/v1/videos/"+uuid.NewString(), ops.Secret, nil); r.status != 404 {
		t.Fatalf("retire unknown: %d %s", r.status, r.raw)
	}
	if r := e.do(t, 0, "DELETE", "/api/ops/v1/videos/nope", ops.Secret, nil); r.status != 400 {
		t.Fatalf("retire bad id: %d %s", r.status, r.raw)
	}
	if r := e.do(t, 0, "GET", "/api/v1/broll/"+id, stranger.Secret, nil); r.status != 404 {
		t.Fatalf("retired clip visible to a stranger: %d", r.status)
	}
	r = e.do(t, 0, "GET", "/api/v1/broll/"+id, buyer.Secret, nil)
	if r.status != 200 {
		t.Fatalf("retired clip of its buyer: %d %s", r.status, r.raw)
	}
	if v := decode[brollclient.Video](t, r); !deref(v.Retired) || v.DownloadUrl == nil || !strings.Contains(*v.DownloadUrl, "/downloads/") {
		t.Fatalf("retired clip of its buyer: %d %s", r.status, r.raw)
	}
	for _, key := range []string{buyer.Secret, stranger.Secret} {
		if found := videoTitles(decode[brollclient.VideoList](t, e.do(t, 0, "GET", "/api/v1/broll?search=waving", key, nil))); len(found) != 0 {
			t.Fatalf("retired clip in search: %v", found)
		}
	}
}
