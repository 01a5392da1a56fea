// Package tasks is the asynq side of the work queues: the task names,
// queues and payloads the worker reads, and the queue that enqueues them.
// It implements catalog's EmbedQueue, MediaQueue, PreviewQueue and ReprobeQueue, so the
// domain never sees asynq.
package tasks

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
)

// Task types. A task carries a batch of clips (ClipsPayload): one queue
// round trip, one lease and one transaction in the worker per batch, not
// per clip, which is what lets an import of 100,000 clips become
// searchable in minutes. The one-clip types (ClipPayload) are those an
// earlier release queued; the worker still runs them.
const (
	TaskEmbedClips = "embed:clips"
	// TaskEmbedClip is the one-clip embedding task of earlier releases.
	TaskEmbedClip = "embed:clip"
)

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
// exponential backoff) before the task is archived and its clips marked
// failed.
const EmbedMaxRetry = 8

// Clips per task: DefaultBatchSize unless the queue is given another
// (BROLL_WORKER_BATCH_SIZE), at most MaxBatchSize.
const (
	DefaultBatchSize = 100
	MaxBatchSize     = 1000
)

// ClipsPayload is the body of a task about a batch of clips.
type ClipsPayload struct {
	VideoIDs []uuid.UUID `json:"video_ids"`
	Trace
}

// ClipPayload is the body of the one-clip tasks of earlier releases
// (TaskEmbedClip, TaskProcessMedia).
type ClipPayload struct {
	VideoID uuid.UUID `json:"video_id"`
}

// AsynqQueue enqueues clips in batches, one task per batch. A task's id is
// its queue's name and a digest of its clips, so the same batch queued
// twice (an import retried through another node) is one task.
type AsynqQueue struct {
	client    *asynq.Client
	inspector *asynq.Inspector
	prefix    string
	batch     int
}

// AsynqQueueOptions are what an AsynqQueue queues to and how.
type AsynqQueueOptions struct {
	// Prefix is the deployment's BROLL_REDIS_PREFIX: the queue queues to
	// its queues (EmbedQueue, MediaQueue, PreviewsQueue).
	Prefix string
	// BatchSize is how many clips go in one task (BROLL_WORKER_BATCH_SIZE);
	// 0 is DefaultBatchSize, and it is at most MaxBatchSize.
	BatchSize int
}

// NewAsynqQueue returns a queue over an asynq client as o says. The
// inspector clears a batch's finished or archived task so that the same
// clips can be queued again (asynq refuses a task id while the old task
// is still kept).
func NewAsynqQueue(client *asynq.Client, inspector *asynq.Inspector, o AsynqQueueOptions) *AsynqQueue {
	batch := min(max(o.BatchSize, 0), MaxBatchSize)
	if batch == 0 {
		batch = DefaultBatchSize
	}
	return &AsynqQueue{client: client, inspector: inspector, prefix: o.Prefix, batch: batch}
}

// kind is one queue's batch task; base is the queue's base name, which a
// deployment's prefix goes before (EmbedQueue).
type kind struct {
	typ, base string
	maxRetry  int
	timeout   time.Duration
	// idSpace sets a kind's task ids apart from those of another kind on
	// the same queue holding the same clips ("" for the first kind).
	idSpace string
}

var embedKind = kind{typ: TaskEmbedClips, base: QueueEmbed, maxRetry: EmbedMaxRetry, timeout: 5 * time.Minute}

// NewEmbedTask builds the embedding task of a batch of clips on the
// embedding queue of prefix.
func NewEmbedTask(ctx context.Context, prefix string, ids []uuid.UUID) *asynq.Task {
	return embedKind.task(ctx, prefix, ids)
}

// queue is the name of k's queue for prefix.
func (k kind) queue(prefix string) string { return prefix + k.base }

// task builds the task of ids on k's queue of prefix, its id the queue's
// name and the digest of the clips (in any order), carrying ctx's trace.
func (k kind) task(ctx context.Context, prefix string, ids []uuid.UUID) *asynq.Task {
	b, _ := json.Marshal(ClipsPayload{VideoIDs: ids, Trace: traceOf(ctx)})
	return asynq.NewTask(k.typ, b, asynq.Queue(k.queue(prefix)), asynq.TaskID(k.taskID(prefix, ids)),
		asynq.MaxRetry(k.maxRetry), asynq.Timeout(k.timeout))
}

// taskID is the id of k's task of ids on its queue of prefix.
func (k kind) taskID(prefix string, ids []uuid.UUID) string {
	return TaskID(k.queue(prefix)+k.idSpace, ids)
}

// TaskID is the id of the task of queue holding ids.
func TaskID(queue string, ids []uuid.UUID) string {
	sorted := slices.Clone(ids)
	slices.SortFunc(sorted, func(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) })
	h := sha256.New()
	for _, id := range sorted {
		h.Write(id[:])
	}
	return queue + ":" + hex.EncodeToString(h.Sum(nil)[:16])
}

// EnqueueEmbed queues the clips' embedding. A batch whose task is still
// waiting counts as queued (the worker reads the clips when it runs); one
// whose old task is archived or completed gets that task removed and a new
// one.
func (q *AsynqQueue) EnqueueEmbed(ctx context.Context, ids []uuid.UUID) (int, error) {
	return q.enqueueBatches(ctx, ids, embedKind)
}

// enqueueBatches queues ids in tasks of k on its queue of q's prefix, up
// to q.batch clips each, and says how many clips were queued before an
// error.
func (q *AsynqQueue) enqueueBatches(ctx context.Context, ids []uuid.UUID, k kind) (int, error) {
	queue := k.queue(q.prefix)
	done := 0
	for chunk := range slices.Chunk(ids, q.batch) {
		if err := q.enqueueTask(ctx, k.task(ctx, q.prefix, chunk), queue, k.taskID(q.prefix, chunk)); err != nil {
			return done, err
		}
		done += len(chunk)
	}
	return done, nil
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
