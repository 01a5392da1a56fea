package api

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/uuid"

	"broll/clients/go/brollclient"
	"broll/internal/testkit"
)

// A posted clip whose figures disagree with its file is listed with the
// file's, and the ops view names each figure that differs with both values,
// so content ops can correct the line; a clip whose line agrees shows none.
func TestOpsVideoShowsMismatches(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	ctx := context.Background()
	ops, err := e.ctl.Tenancy.CreateOpsKey(ctx, "content team")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(testkit.RenderVideo(t, 320, 180, 1))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(e.cfg.ImportDir, "wide.mp4")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	wrong, right := uuid.New(), uuid.New()
	clips := []map[string]any{
		{"id": wrong.String(), "title": "Listed tall", "emotion": "happy", "gender": "female", "difficulty": "easy",
			"media_file": file, "width": 1080, "height": 1920, "orientation": "vertical"},
		{"id": right.String(), "title": "Listed right", "emotion": "happy", "gender": "female", "difficulty": "easy",
			"media_file": file, "width": 320, "height": 180, "orientation": "horizontal"},
	}
	expect[brollclient.ImportResult](t, e.do(t, 0, "POST", "/api/ops/v1/videos", ops.Secret, clips), 200)
	processMedia(t, e.ctl.MediaJobs, wrong, right)

	v := expect[brollclient.ClipState](t, e.do(t, 0, "GET", "/api/ops/v1/videos/"+wrong.String(), ops.Secret, nil), 200)
	got := map[string][2]any{}
	for _, m := range v.Mismatches {
		got[string(m.Field)] = [2]any{m.Listed, m.Probed}
	}
	want := map[string][2]any{"width": {1080.0, 320.0}, "height": {1920.0, 180.0}, "orientation": {"vertical", "horizontal"}}
	if len(got) != len(want) || got["width"] != want["width"] || got["height"] != want["height"] || got["orientation"] != want["orientation"] {
		t.Fatalf("mismatches = %+v, want %v", v.Mismatches, want)
	}
	if v := expect[brollclient.ClipState](t, e.do(t, 0, "GET", "/api/ops/v1/videos/"+right.String(), ops.Secret, nil), 200); len(v.Mismatches) != 0 {
		t.Fatalf("the clip whose line agrees: mismatches %+v", v.Mismatches)
	}
}
