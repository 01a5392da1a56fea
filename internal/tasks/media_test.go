package tasks_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"broll/internal/tasks"
	"broll/internal/testkit"
)

// pendingClips returns the clips of queue's pending tasks, failing the test
// on a clip queued twice.
func pendingClips(t *testing.T, insp *asynq.Inspector, queue string) map[uuid.UUID]bool {
	t.Helper()
	infos, err := insp.ListPendingTasks(queue, asynq.PageSize(1000))
	if err != nil {
		t.Fatalf("list %s: %v", queue, err)
	}
	clips := map[uuid.UUID]bool{}
	for _, info := range infos {
		var p tasks.ClipsPayload
		if err := json.Unmarshal(info.Payload, &p); err != nil {
			t.Fatal(err)
		}
		for _, id := range p.VideoIDs {
			if clips[id] {
				t.Fatalf("clip %s queued twice on %s", id, queue)
			}
			clips[id] = true
		}
	}
	return clips
}

// Media and preview tasks go to their own queues, a batch of clips per
// task, and queueing the same clips again while their tasks wait adds
// nothing.
func TestEnqueueMediaInBatches(t *testing.T) {
	t.Parallel()
	rds := testkit.Redis(t)
	inspector := asynq.NewInspectorFromRedisClient(rds.Client)
	q := tasks.NewAsynqQueue(asynq.NewClientFromRedisClient(rds.Client), inspector, tasks.AsynqQueueOptions{Prefix: rds.Prefix, BatchSize: 2})
	ids := []uuid.UUID{uuid.New(), uuid.New(), uuid.New()}
	for range 2 {
		if n, err := q.EnqueueMedia(context.Background(), ids); err != nil || n != len(ids) {
			t.Fatalf("enqueue media = %d, %v", n, err)
		}
		if n, err := q.EnqueuePreviews(context.Background(), ids[:1]); err != nil || n != 1 {
			t.Fatalf("enqueue previews = %d, %v", n, err)
		}
	}
	info, err := inspector.GetQueueInfo(tasks.MediaQueue(rds.Prefix))
	if err != nil {
		t.Fatal(err)
	}
	if info.Pending != 2 {
		t.Fatalf("pending media tasks = %d, want 2 (batches of 2)", info.Pending)
	}
	if got := pendingClips(t, inspector, tasks.MediaQueue(rds.Prefix)); len(got) != len(ids) {
		t.Fatalf("media tasks hold %d clips, want %d", len(got), len(ids))
	}
	if got := pendingClips(t, inspector, tasks.PreviewsQueue(rds.Prefix)); len(got) != 1 || !got[ids[0]] {
		t.Fatalf("preview tasks hold %v", got)
	}
	if embed, err := inspector.GetQueueInfo(tasks.EmbedQueue(rds.Prefix)); err == nil && embed.Pending != 0 {
		t.Fatalf("media clips on the embed queue: %d", embed.Pending)
	}
}

// A reprobe of clips whose media task still waits on the same queue is a
// task of its own: the two never pass for one another.
func TestReprobeTasksBesideMediaTasks(t *testing.T) {
	t.Parallel()
	rds := testkit.Redis(t)
	inspector := asynq.NewInspectorFromRedisClient(rds.Client)
	q := tasks.NewAsynqQueue(asynq.NewClientFromRedisClient(rds.Client), inspector, tasks.AsynqQueueOptions{Prefix: rds.Prefix})
	ids := []uuid.UUID{uuid.New(), uuid.New()}
	if n, err := q.EnqueueMedia(context.Background(), ids); err != nil || n != 2 {
		t.Fatalf("enqueue media = %d, %v", n, err)
	}
	if n, err := q.EnqueueReprobe(context.Background(), ids); err != nil || n != 2 {
		t.Fatalf("enqueue reprobe = %d, %v", n, err)
	}
	infos, err := inspector.ListPendingTasks(tasks.MediaQueue(rds.Prefix))
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]int{}
	for _, info := range infos {
		types[info.Type]++
	}
	if types[tasks.TaskProbeClips] != 1 || types[tasks.TaskReprobeClips] != 1 {
		t.Fatalf("media queue holds %v, want one probe and one reprobe task", types)
	}
}
