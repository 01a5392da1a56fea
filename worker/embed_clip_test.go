package worker_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"broll/embed"
	"broll/embed/embedtest"
	"broll/internal/tasks"
	"broll/worker"
)

// recordingEmbedder wraps an embedder and records the size of every call.
type recordingEmbedder struct {
	embed.Embedder
	mu    sync.Mutex
	calls []int
}

func (r *recordingEmbedder) Embed(ctx context.Context, kind embed.Kind, texts []string) ([][]float32, error) {
	r.mu.Lock()
	r.calls = append(r.calls, len(texts))
	r.mu.Unlock()
	return r.Embedder.Embed(ctx, kind, texts)
}

func (r *recordingEmbedder) sizes() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]int(nil), r.calls...)
}

// blockingEmbedder announces each call on started and then blocks until
// release is closed (and then embeds) or its context ends.
type blockingEmbedder struct {
	embed.Embedder
	started chan struct{}
	release chan struct{}
}

func newBlocking() *blockingEmbedder {
	return &blockingEmbedder{Embedder: embed.NewBuiltin(), started: make(chan struct{}, 100), release: make(chan struct{})}
}

func (b *blockingEmbedder) Embed(ctx context.Context, kind embed.Kind, texts []string) ([][]float32, error) {
	b.started <- struct{}{}
	select {
	case <-b.release:
		return b.Embedder.Embed(ctx, kind, texts)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func waitStarted(t *testing.T, b *blockingEmbedder) {
	t.Helper()
	select {
	case <-b.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the embedder was never called")
	}
}

func TestEmbedsInBatches(t *testing.T) {
	t.Parallel()
	e := setup(t)
	var ids []uuid.UUID
	for i := range 40 {
		ids = append(ids, e.insertClip(t, fmt.Sprintf("Clip number %d of a man driving", i)))
	}
	// Queued before the worker starts, as after a bulk import.
	e.enqueue(t, ids...)
	rec := &recordingEmbedder{Embedder: embed.NewBuiltin()}
	e.start(t, rec, worker.Options{BatchSize: 8, Concurrency: 2})

	for _, id := range ids {
		e.waitStatus(t, id, "ready", 20*time.Second)
	}
	sizes := rec.sizes()
	t.Logf("batch sizes: %v", sizes)
	total, biggest := 0, 0
	for _, n := range sizes {
		total += n
		biggest = max(biggest, n)
	}
	if total != len(ids) {
		t.Errorf("embedded %d texts for %d clips", total, len(ids))
	}
	if biggest > 8 {
		t.Errorf("a batch of %d, over BatchSize 8", biggest)
	}
	if len(sizes) > len(ids)/2 {
		t.Errorf("%d embedder calls for %d clips (%v): not batched", len(sizes), len(ids), sizes)
	}
}

func TestFailingEmbedderRetriesThenArchivesAndRecovers(t *testing.T) {
	t.Parallel()
	e := setup(t)
	srv := embedtest.NewOllama(t, embedtest.Options{})
	srv.Fail(http.StatusInternalServerError)
	ollama, err := embed.NewOllama(embed.OllamaOptions{Host: srv.URL, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	e.start(t, ollama, worker.Options{})

	id := e.insertClip(t, "Woman cooking pasta in a bright kitchen")
	e.enqueueWithRetries(t, id, 2)

	s := e.waitStatus(t, id, "failed", 20*time.Second)
	if !strings.Contains(s.Error, "500") || s.Dims != 0 {
		t.Errorf("state = %+v, want the server's error and no vector", s)
	}
	info := e.waitTask(t, id, asynq.TaskStateArchived, 10*time.Second)
	if info.Retried != 2 || !strings.Contains(info.LastErr, "500") {
		t.Errorf("archived task: retried %d, last error %q", info.Retried, info.LastErr)
	}
	var tries int
	for _, r := range srv.Requests() {
		if strings.HasPrefix(r.Input[0], "search_document: Woman cooking") {
			tries++
		}
	}
	if tries != 3 {
		t.Errorf("embedder asked %d times, want 3 (first try and 2 retries)", tries)
	}

	// Recovery: the model is back and the clip is queued again, as
	// `brollctl clips reembed --failed` does. The archived task holds the
	// clip's task id, so it is deleted first.
	srv.Fail(0)
	if err := e.insp.DeleteTask(e.embedQueue, e.taskID(id)); err != nil {
		t.Fatal(err)
	}
	e.enqueue(t, id)
	s = e.waitStatus(t, id, "ready", 20*time.Second)
	if s.Model != "nomic-embed-text" || s.Dims != embed.Dimensions || s.Error != "" {
		t.Errorf("after recovery: %+v", s)
	}
}

// A clip deleted before its task ran is done without the embedder: there
// is nothing to retry.
func TestMissingClipIsDoneWithoutRetries(t *testing.T) {
	t.Parallel()
	e := setup(t)
	rec := &recordingEmbedder{Embedder: embed.NewBuiltin()}
	e.start(t, rec, worker.Options{})

	gone := uuid.New()
	e.enqueueWithRetries(t, gone, 5)
	e.waitTaskDone(t, gone)
	if n := len(rec.sizes()); n != 0 {
		t.Errorf("embedder called %d times for a clip that does not exist", n)
	}
}

func TestBadPayloadIsArchived(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.start(t, embed.NewBuiltin(), worker.Options{})
	task := asynq.NewTask(tasks.TaskEmbedClip, []byte(`{"video_id":"not-a-uuid"}`),
		asynq.Queue(e.embedQueue), asynq.TaskID("bad"), asynq.MaxRetry(5))
	if _, err := e.client.Enqueue(task); err != nil {
		t.Fatal(err)
	}
	var info *asynq.TaskInfo
	waitFor(t, 10*time.Second, func() bool {
		var err error
		info, err = e.insp.GetTaskInfo(e.embedQueue, "bad")
		return err == nil && info.State == asynq.TaskStateArchived
	}, func() string { return fmt.Sprintf("task %+v not archived", info) })
	if info.Retried != 0 {
		t.Errorf("bad payload retried %d times", info.Retried)
	}
}

func TestKilledMidJobLosesNothing(t *testing.T) {
	t.Parallel()
	e := setup(t)
	id := e.insertClip(t, "Man doing a workout at the gym")
	e.enqueue(t, id)

	blocking := newBlocking()
	stop := e.start(t, blocking, worker.Options{ShutdownTimeout: 200 * time.Millisecond})
	waitStarted(t, blocking)
	// The job never ends: stop returns once asynq gives up on it after
	// ShutdownTimeout (stop fails the test if the worker outlives its own
	// deadline).
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if s := e.state(t, id); s.Status != "pending" {
		t.Fatalf("after the kill: %+v, want pending", s)
	}
	// The task went back to its queue, not to the retry or archive sets.
	info, err := e.insp.GetTaskInfo(e.embedQueue, e.taskID(id))
	if err != nil {
		t.Fatal(err)
	}
	if info.State != asynq.TaskStatePending || info.Retried != 0 {
		t.Errorf("task after the kill: state %s, retried %d", info.State, info.Retried)
	}

	e.start(t, embed.NewBuiltin(), worker.Options{})
	if s := e.waitStatus(t, id, "ready", 20*time.Second); s.Dims != embed.Dimensions {
		t.Fatalf("after restart: %+v", s)
	}
}

func TestShutdownLetsInFlightJobFinish(t *testing.T) {
	t.Parallel()
	e := setup(t)
	id := e.insertClip(t, "Couple walking on the beach at sunset")
	e.enqueue(t, id)

	blocking := newBlocking()
	stop := e.start(t, blocking, worker.Options{ShutdownTimeout: 10 * time.Second})
	waitStarted(t, blocking)
	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	// The job is still running while the worker shuts down; let it end.
	close(blocking.release)
	select {
	case err := <-stopped:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("worker did not stop")
	}
	if s := e.state(t, id); s.Status != "ready" {
		t.Fatalf("in-flight job did not finish: %+v", s)
	}
}

// TestQueuedAgainAfterEmbeddingEmbedsNothing: a clip queued again once its
// task has finished (an import retried through another node) finds its
// vector current and costs the embedder nothing; a change of its text makes
// it pending again, and the next task embeds it.
func TestQueuedAgainAfterEmbeddingEmbedsNothing(t *testing.T) {
	t.Parallel()
	e := setup(t)
	id := e.insertClip(t, "A woman laughing at a phone")
	rec := &recordingEmbedder{Embedder: embed.NewBuiltin()}
	e.start(t, rec, worker.Options{})
	e.enqueue(t, id)
	e.waitStatus(t, id, "ready", 20*time.Second)
	e.waitTaskDone(t, id)
	if n := len(rec.sizes()); n != 1 {
		t.Fatalf("%d embedder calls for one clip", n)
	}

	e.enqueue(t, id) // the finished task is replaced by a new one
	e.waitTaskDone(t, id)
	if n := len(rec.sizes()); n != 1 {
		t.Fatalf("the clip was embedded again: %d embedder calls", n)
	}

	if _, err := e.pool.Exec(context.Background(),
		`UPDATE videos SET title = 'A man laughing at a phone', embedding_status = 'pending' WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	e.enqueue(t, id)
	e.waitStatus(t, id, "ready", 20*time.Second)
	e.waitTaskDone(t, id)
	if n := len(rec.sizes()); n != 2 {
		t.Fatalf("a changed clip: %d embedder calls, want 2", n)
	}
}

// waitTaskDone waits until the clip's task has been processed: a finished
// task is not kept, so it is no longer found.
func (e *env) waitTaskDone(t *testing.T, id uuid.UUID) {
	t.Helper()
	var err error
	waitFor(t, 20*time.Second, func() bool {
		_, err = e.insp.GetTaskInfo(e.embedQueue, e.taskID(id))
		return errors.Is(err, asynq.ErrTaskNotFound)
	}, func() string { return fmt.Sprintf("task of %s still there (%v)", id, err) })
}
