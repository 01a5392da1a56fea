package tasks_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"broll/catalog"
	"broll/catalog/imports"
	"broll/internal/config"
	"broll/internal/tasks"
	"broll/internal/testkit"
	"broll/wiring"
	"broll/wiring/wiringtest"
)

// The queue is what the catalog hands clips to in production.
var (
	_ catalog.EmbedQueue   = (*tasks.AsynqQueue)(nil)
	_ catalog.MediaQueue   = (*tasks.AsynqQueue)(nil)
	_ catalog.PreviewQueue = (*tasks.AsynqQueue)(nil)
)

// The import enqueues real asynq tasks, a batch of clips per task: every
// clip's media batch (which embeds it too). Queueing the same clips again
// while their tasks wait adds nothing.
func TestImportEnqueuesAsynqTasks(t *testing.T) {
	t.Parallel()
	pool, _ := testkit.NewPool(t)
	rds := testkit.Redis(t)
	cfg := config.Defaults()
	cfg.MediaDir = filepath.Join(t.TempDir(), "media")
	cfg.RedisPrefix = rds.Prefix
	g := wiringtest.Open(t, cfg, wiring.Options{Parts: wiring.CLIParts, Pool: pool, Redis: rds.Client})
	svc, inspector := g.Catalog, g.Inspector

	src := t.TempDir()
	if err := os.MkdirAll(filepath.Join(src, "media"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "media", "full.avi"), []byte("RIFF"), 0o644); err != nil {
		t.Fatal(err)
	}
	// More than one of the catalog's enqueue chunks (500 clips).
	clips := make([]imports.VideoInput, 520)
	for i := range clips {
		clips[i] = imports.VideoInput{Title: "Woman jogging in the park", Emotion: "confident", Gender: "female",
			Difficulty: "medium", MediaFile: "media/full.avi"}
	}
	res, err := g.Imports.ImportVideos(context.Background(), clips, src, nil)
	if err != nil || res.Queued != len(clips) {
		t.Fatalf("import = %+v, %v", res, err)
	}
	want := (len(clips) + tasks.DefaultBatchSize - 1) / tasks.DefaultBatchSize
	info, err := inspector.GetQueueInfo(tasks.MediaQueue(rds.Prefix))
	if err != nil {
		t.Fatal(err)
	}
	if info.Pending != want {
		t.Fatalf("pending media tasks = %d, want %d", info.Pending, want)
	}
	if got := pendingClips(t, inspector, tasks.MediaQueue(rds.Prefix)); len(got) != len(clips) {
		t.Fatalf("media tasks hold %d clips, want %d", len(got), len(clips))
	}
	for range 2 {
		if n, err := svc.Reembed(context.Background(), catalog.ReembedStale, "m"); err != nil || n != len(clips) {
			t.Fatalf("reembed = %d, %v", n, err)
		}
	}
	if got := pendingClips(t, inspector, tasks.EmbedQueue(rds.Prefix)); len(got) != len(clips) {
		t.Fatalf("embed tasks hold %d clips after two reembeds, want %d", len(got), len(clips))
	}
}
