package tasks_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"broll/catalog"
	"broll/graph"
	"broll/graph/graphtest"
	"broll/internal/config"
	"broll/internal/tasks"
	"broll/internal/testkit"
)

// The queue is what the catalog hands clips to in production.
var (
	_ catalog.EmbedQueue = (*tasks.AsynqQueue)(nil)
	_ catalog.MediaQueue = (*tasks.AsynqQueue)(nil)
)

// The import enqueues real asynq tasks, one per clip, unique per clip.
func TestImportEnqueuesAsynqTasks(t *testing.T) {
	t.Parallel()
	pool, _ := testkit.NewPool(t)
	rds := testkit.Redis(t)
	cfg := config.Defaults()
	cfg.MediaDir = filepath.Join(t.TempDir(), "media")
	cfg.RedisPrefix = rds.Prefix
	g := graphtest.Open(t, cfg, graph.Options{Parts: graph.CLIParts, Pool: pool, Redis: rds.Client})
	svc, inspector := g.Catalog, g.Inspector

	src := t.TempDir()
	if err := os.MkdirAll(filepath.Join(src, "media"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "media", "full.avi"), []byte("RIFF"), 0o644); err != nil {
		t.Fatal(err)
	}
	// More than one of the catalog's enqueue chunks (500 clips).
	clips := make([]catalog.VideoInput, 520)
	for i := range clips {
		clips[i] = catalog.VideoInput{Title: "Woman jogging in the park", Emotion: "confident", Gender: "female",
			Difficulty: "medium", MediaFile: "media/full.avi"}
	}
	res, err := svc.ImportVideos(context.Background(), clips, src, nil)
	if err != nil || res.Queued != len(clips) {
		t.Fatalf("import = %+v, %v", res, err)
	}
	info, err := inspector.GetQueueInfo(tasks.EmbedQueue(rds.Prefix))
	if err != nil {
		t.Fatal(err)
	}
	if info.Pending != len(clips) {
		t.Fatalf("pending tasks = %d, want %d", info.Pending, len(clips))
	}
	// Queueing a clip that is already queued is not an error and adds nothing.
	if n, err := svc.Reembed(context.Background(), catalog.ReembedStale, "m"); err != nil || n != len(clips) {
		t.Fatalf("reembed = %d, %v", n, err)
	}
	if info, _ := inspector.GetQueueInfo(tasks.EmbedQueue(rds.Prefix)); info.Pending != len(clips) {
		t.Fatalf("pending tasks after reembed = %d", info.Pending)
	}
}
