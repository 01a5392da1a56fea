package tasks_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"broll/internal/tasks"
	"broll/internal/testkit"
)

// Media tasks go to their own queue, one per clip, and queueing a clip
// again while its task waits adds nothing.
func TestEnqueueMediaOneTaskPerClip(t *testing.T) {
	t.Parallel()
	rds := testkit.Redis(t)
	inspector := asynq.NewInspectorFromRedisClient(rds.Client)
	q := tasks.NewAsynqQueue(asynq.NewClientFromRedisClient(rds.Client), inspector, rds.Prefix)
	ids := []uuid.UUID{uuid.New(), uuid.New()}
	for range 2 {
		if n, err := q.EnqueueMedia(context.Background(), ids); err != nil || n != len(ids) {
			t.Fatalf("enqueue media = %d, %v", n, err)
		}
	}
	info, err := inspector.GetQueueInfo(tasks.MediaQueue(rds.Prefix))
	if err != nil {
		t.Fatal(err)
	}
	if info.Pending != len(ids) {
		t.Fatalf("pending media tasks = %d, want %d", info.Pending, len(ids))
	}
	if embed, err := inspector.GetQueueInfo(tasks.EmbedQueue(rds.Prefix)); err == nil && embed.Pending != 0 {
		t.Fatalf("media clips on the embed queue: %d", embed.Pending)
	}
}
