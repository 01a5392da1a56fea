package catalog

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

// QueueEmbed is the asynq queue embedding tasks go to.
const QueueEmbed = "embed"

// EmbedMaxRetry is how often a failing embedding is retried (with asynq's
// exponential backoff) before the task is archived and the clip marked failed.
const EmbedMaxRetry = 8

// EmbedPayload is the body of a TaskEmbedClip task.
type EmbedPayload struct {
	VideoID uuid.UUID `json:"video_id"`
}

// EmbedQueue hands clips to the embedding worker.
type EmbedQueue interface {
	EnqueueEmbed(ctx context.Context, ids []uuid.UUID) (int, error)
}

// AsynqQueue enqueues one task per clip, unique per clip id so that a clip
// changed twice before the worker gets to it is embedded once.
type AsynqQueue struct {
	client *asynq.Client
}

// NewAsynqQueue returns a queue over an asynq client.
func NewAsynqQueue(client *asynq.Client) *AsynqQueue { return &AsynqQueue{client: client} }

// NewEmbedTask builds the task for one clip.
func NewEmbedTask(id uuid.UUID) *asynq.Task {
	b, _ := json.Marshal(EmbedPayload{VideoID: id})
	return asynq.NewTask(TaskEmbedClip, b,
		asynq.Queue(QueueEmbed), asynq.TaskID("embed:"+id.String()),
		asynq.MaxRetry(EmbedMaxRetry), asynq.Timeout(2*time.Minute), asynq.Retention(time.Hour))
}

// EnqueueEmbed queues the clips; ids already queued count as queued.
func (q *AsynqQueue) EnqueueEmbed(ctx context.Context, ids []uuid.UUID) (int, error) {
	n := 0
	for _, id := range ids {
		_, err := q.client.EnqueueContext(ctx, NewEmbedTask(id))
		if err != nil && !errors.Is(err, asynq.ErrTaskIDConflict) && !errors.Is(err, asynq.ErrDuplicateTask) {
			return n, fmt.Errorf("enqueue embed %s: %w", id, err)
		}
		n++
	}
	return n, nil
}
