// Package tasks is the asynq side of the work queues: the task names,
// queues and payloads the worker reads, and the queue that enqueues them.
// It implements catalog's EmbedQueue and MediaQueue, so the domain never
// sees asynq.
package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
)

// TaskEmbedClip is the asynq task type that asks a worker to embed one clip.
const TaskEmbedClip = "embed:clip"

// QueueEmbed is the base name of the asynq queue embedding tasks go to;
// EmbedQueue names a deployment's.
const QueueEmbed = "embed"

// EmbedQueue is the embedding queue of the deployment whose Redis keys start
// with prefix (BROLL_REDIS_PREFIX). asynq keeps a queue under
// "asynq:{<name>}:...", so a name that carries the prefix keeps the tasks of
// deployments (and tests) that share one Redis database apart; asynq has no
// key prefix of its own.
func EmbedQueue(prefix string) string { return prefix + QueueEmbed }

// EmbedMaxRetry is how often a failing embedding is retried (with asynq's
// exponential backoff) before the task is archived and the clip marked failed.
const EmbedMaxRetry = 8

// ClipPayload is the body of a task about one clip (TaskEmbedClip,
// TaskProcessMedia).
type ClipPayload struct {
	VideoID uuid.UUID `json:"video_id"`
}

// AsynqQueue enqueues one task per clip, unique per clip id so that a clip
// changed twice before the worker gets to it is embedded once.
type AsynqQueue struct {
	client    *asynq.Client
	inspector *asynq.Inspector
	prefix    string
}

// NewAsynqQueue returns a queue over an asynq client that queues to the
// queues of prefix (EmbedQueue, MediaQueue). The inspector clears a clip's
// finished or archived task so that the clip can be queued again (asynq
// refuses a task id while the old task is still kept).
func NewAsynqQueue(client *asynq.Client, inspector *asynq.Inspector, prefix string) *AsynqQueue {
	return &AsynqQueue{client: client, inspector: inspector, prefix: prefix}
}

// NewEmbedTask builds the task for one clip on the embedding queue of prefix.
func NewEmbedTask(prefix string, id uuid.UUID) *asynq.Task {
	return newClipTask(TaskEmbedClip, EmbedQueue(prefix), id, EmbedMaxRetry, 2*time.Minute)
}

// newClipTask builds a task of typ about clip id on queue, its id the
// queue's name and the clip's, so that a clip is queued once per queue.
func newClipTask(typ, queue string, id uuid.UUID, maxRetry int, timeout time.Duration) *asynq.Task {
	b, _ := json.Marshal(ClipPayload{VideoID: id})
	return asynq.NewTask(typ, b, asynq.Queue(queue), asynq.TaskID(queue+":"+id.String()),
		asynq.MaxRetry(maxRetry), asynq.Timeout(timeout))
}

// EnqueueEmbed queues the clips. A clip whose task is still waiting counts
// as queued (the worker reads the clip when it runs); one whose old task is
// archived or completed gets that task removed and a new one.
func (q *AsynqQueue) EnqueueEmbed(ctx context.Context, ids []uuid.UUID) (int, error) {
	return q.enqueueEach(ctx, ids, EmbedQueue(q.prefix), NewEmbedTask)
}

// enqueueEach queues one task per clip on queue (see newClipTask) and says
// how many were queued before an error.
func (q *AsynqQueue) enqueueEach(ctx context.Context, ids []uuid.UUID, queue string,
	newTask func(string, uuid.UUID) *asynq.Task) (int, error) {
	for i, id := range ids {
		if err := q.enqueueTask(ctx, newTask(q.prefix, id), queue, queue+":"+id.String()); err != nil {
			return i, err
		}
	}
	return len(ids), nil
}

// enqueueTask queues task (of queue, with id taskID), replacing a finished
// or archived task of the same id.
func (q *AsynqQueue) enqueueTask(ctx context.Context, task *asynq.Task, queue, taskID string) error {
	_, err := q.client.EnqueueContext(ctx, task)
	if err == nil || errors.Is(err, asynq.ErrDuplicateTask) {
		return nil
	}
	if !errors.Is(err, asynq.ErrTaskIDConflict) {
		return fmt.Errorf("enqueue %s: %w", taskID, err)
	}
	if q.inspector == nil {
		return nil
	}
	info, err := q.inspector.GetTaskInfo(queue, taskID)
	if errors.Is(err, asynq.ErrTaskNotFound) {
		_, err = q.client.EnqueueContext(ctx, task)
		if err == nil || errors.Is(err, asynq.ErrTaskIDConflict) {
			return nil
		}
		return fmt.Errorf("enqueue %s: %w", taskID, err)
	}
	if err != nil {
		return fmt.Errorf("enqueue %s: %w", taskID, err)
	}
	if info.State != asynq.TaskStateArchived && info.State != asynq.TaskStateCompleted {
		return nil
	}
	if err := q.inspector.DeleteTask(queue, taskID); err != nil && !errors.Is(err, asynq.ErrTaskNotFound) {
		return fmt.Errorf("enqueue %s: clear old task: %w", taskID, err)
	}
	if _, err := q.client.EnqueueContext(ctx, task); err != nil && !errors.Is(err, asynq.ErrTaskIDConflict) {
		return fmt.Errorf("enqueue %s: %w", taskID, err)
	}
	return nil
}
