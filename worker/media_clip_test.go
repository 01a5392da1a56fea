package worker_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"

	"broll/catalog/imports"
	"broll/catalog/media"
	"broll/embed"
	"broll/internal/testkit"
	"broll/worker"
)

// An imported clip whose line gives no figures gets them from its file
// through the worker, its vector and its sale in the same write, and then
// a preview and thumbnail; a file the probe cannot read fails its clip
// with the reason, shown by the catalog's status.
func TestWorkerProbesImportedClips(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	src := t.TempDir()
	video := testkit.RenderVideo(t, 1080, 1920, 7.5)
	junk := filepath.Join(src, "junk.mp4")
	if err := os.WriteFile(junk, []byte("this is not a video"), 0o644); err != nil {
		t.Fatal(err)
	}
	good, bad := uuid.New(), uuid.New()
	_, err := e.imports.ImportVideos(ctx, []imports.VideoInput{
		{ID: good.String(), Title: "Tall pattern", Emotion: "neutral", Gender: "female", Difficulty: "easy", MediaFile: video},
		{ID: bad.String(), Title: "Broken file", Emotion: "neutral", Gender: "male", Difficulty: "easy", MediaFile: junk},
	}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	e.start(t, embed.NewBuiltin(), worker.Options{})

	mediaStatus := func(id uuid.UUID) (status, reason string) {
		if err := e.pool.QueryRow(ctx, `SELECT media_status, coalesce(media_error, '') FROM videos WHERE id = $1`, id).Scan(&status, &reason); err != nil {
			t.Fatal(err)
		}
		return status, reason
	}
	for _, id := range []uuid.UUID{good, bad} {
		waitFor(t, 60*time.Second, func() bool { s, _ := mediaStatus(id); return s != "pending" },
			func() string { s, r := mediaStatus(id); return fmt.Sprintf("clip %s media %s %s", id, s, r) })
	}
	if s, r := mediaStatus(good); s != "ready" {
		t.Fatalf("good clip: %s %s", s, r)
	}
	// Probe, vector and sale are one row update: a clip that passed the
	// probe is never on sale without its vector.
	var embedding string
	var listed bool
	if err := e.pool.QueryRow(ctx, `SELECT embedding_status, retired_at IS NULL FROM videos WHERE id = $1`, good).Scan(&embedding, &listed); err != nil {
		t.Fatal(err)
	}
	if embedding != "ready" || !listed {
		t.Fatalf("good clip after its probe: embedding %s, listed %v", embedding, listed)
	}
	// The preview and thumbnail follow on the previews queue.
	waitFor(t, 60*time.Second, func() bool {
		var n int
		if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM videos WHERE id = $1 AND preview_key IS NOT NULL AND thumbnail_key IS NOT NULL`, good).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 1
	}, func() string { return "no preview and thumbnail made" })
	var dur, fps float64
	var w, h int
	var orientation, mediaType, preview, thumb string
	if err := e.pool.QueryRow(ctx, `SELECT duration_seconds, fps, width, height, orientation, media_type, preview_key, thumbnail_key
		FROM videos WHERE id = $1`, good).Scan(&dur, &fps, &w, &h, &orientation, &mediaType, &preview, &thumb); err != nil {
		t.Fatal(err)
	}
	if dur != 7.5 || fps != 30 || w != 1080 || h != 1920 || orientation != "vertical" || mediaType != "video" {
		t.Fatalf("figures: %v s %v fps %dx%d %s %s", dur, fps, w, h, orientation, mediaType)
	}
	p, err := media.ProbeFile(ctx, filepath.Join(e.cfg.MediaDir, filepath.FromSlash(preview)))
	if err != nil || max(p.Width, p.Height) != media.PreviewLongSide || p.Duration > media.PreviewMaxSeconds {
		t.Fatalf("preview %s: %+v %v", preview, p, err)
	}
	if _, err := e.media.Stat(ctx, thumb); err != nil {
		t.Fatalf("thumbnail %s: %v", thumb, err)
	}

	st, err := e.cat.Status(ctx, embed.NewBuiltin().Model())
	if err != nil {
		t.Fatal(err)
	}
	if st.Media.Ready != 1 || st.Media.Failed != 1 || len(st.Media.FailedClips) != 1 ||
		st.Media.FailedClips[0].ID != bad || st.Media.FailedClips[0].Reason == "" {
		t.Fatalf("status: %+v", st.Media)
	}
}
