package tasks

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
)

// TaskProcessMedia asks a worker to probe one clip's full-quality file and
// make its missing preview and thumbnail.
const TaskProcessMedia = "media:process"

// QueueMedia is the base name of the asynq queue media tasks go to;
// MediaQueue names a deployment's.
const QueueMedia = "media"

// MediaQueue is the media queue of the deployment whose Redis keys start
// with prefix (see EmbedQueue).
func MediaQueue(prefix string) string { return prefix + QueueMedia }

// MediaMaxRetry is how often a failing media job (the store or ffmpeg
// failing, not a file the probe cannot read) is retried before the task is
// archived and the clip marked failed.
const MediaMaxRetry = 5

// NewMediaTask builds the task for one clip on the media queue of prefix.
func NewMediaTask(prefix string, id uuid.UUID) *asynq.Task {
	return newClipTask(TaskProcessMedia, MediaQueue(prefix), id, MediaMaxRetry, 10*time.Minute)
}

// EnqueueMedia queues the clips' media processing, one task per clip.
func (q *AsynqQueue) EnqueueMedia(ctx context.Context, ids []uuid.UUID) (int, error) {
	return q.enqueueEach(ctx, ids, MediaQueue(q.prefix), NewMediaTask)
}
