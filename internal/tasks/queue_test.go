package tasks_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/hibiken/asynq"

	"broll/catalog"
	"broll/catalog/media"
	"broll/internal/tasks"
	"broll/internal/testkit"
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
	store, err := media.NewLocal(filepath.Join(t.TempDir(), "media"))
	if err != nil {
		t.Fatal(err)
	}
	rds := testkit.Redis(t)
	client := asynq.NewClientFromRedisClient(rds.Client)
	inspector := asynq.NewInspectorFromRedisClient(rds.Client)
	svc := catalog.New(pool, store, tasks.NewAsynqQueue(client, inspector, rds.Prefix))

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
