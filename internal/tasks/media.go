package tasks

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
)

// TaskProbeClips asks a worker to probe a batch of clips' full-quality
// files, embed them and put those that passed on sale.
const TaskProbeClips = "media:clips"

// TaskProcessMedia is the one-clip media task of earlier releases (probe,
// preview and thumbnail of one clip).
const TaskProcessMedia = "media:process"

// QueueMedia is the base name of the asynq queue media tasks go to;
// MediaQueue names a deployment's.
const QueueMedia = "media"

// MediaQueue is the media queue of the deployment whose Redis keys start
// with prefix (see EmbedQueue).
func MediaQueue(prefix string) string { return prefix + QueueMedia }

// MediaMaxRetry is how often a failing media job (the store failing, not
// a file the probe refuses) is retried before the task is archived and
// its clips still waiting are marked failed.
const MediaMaxRetry = 5

// TaskMakePreviews asks a worker to make the previews and thumbnails a
// batch of clips on sale still lacks (ffmpeg), on a queue of its own so
// that encoding never holds up probing.
const TaskMakePreviews = "previews:clips"

// QueuePreviews is the base name of the asynq queue preview tasks go to;
// PreviewsQueue names a deployment's.
const QueuePreviews = "previews"

// PreviewsQueue is the preview queue of the deployment whose Redis keys
// start with prefix (see EmbedQueue).
func PreviewsQueue(prefix string) string { return prefix + QueuePreviews }

// PreviewsMaxRetry is how often a failing preview job is retried.
const PreviewsMaxRetry = 5

// TaskReprobeClips asks a worker to read a batch of stored clips' files
// again (`brollctl clips reprobe`), on the media queue.
const TaskReprobeClips = "media:reprobe"

var (
	mediaKind   = kind{typ: TaskProbeClips, base: QueueMedia, maxRetry: MediaMaxRetry, timeout: 10 * time.Minute}
	reprobeKind = kind{typ: TaskReprobeClips, base: QueueMedia, maxRetry: MediaMaxRetry, timeout: 10 * time.Minute,
		idSpace: ":reprobe"}
	previewKind = kind{typ: TaskMakePreviews, base: QueuePreviews, maxRetry: PreviewsMaxRetry, timeout: 30 * time.Minute}
)

// NewMediaTask builds the media task of a batch of clips on the media
// queue of prefix.
func NewMediaTask(ctx context.Context, prefix string, ids []uuid.UUID) *asynq.Task {
	return mediaKind.task(ctx, prefix, ids)
}

// EnqueueMedia queues the clips' probing, in batches.
func (q *AsynqQueue) EnqueueMedia(ctx context.Context, ids []uuid.UUID) (int, error) {
	return q.enqueueBatches(ctx, ids, mediaKind)
}

// EnqueuePreviews queues the making of the clips' previews and
// thumbnails, in batches.
func (q *AsynqQueue) EnqueuePreviews(ctx context.Context, ids []uuid.UUID) (int, error) {
	return q.enqueueBatches(ctx, ids, previewKind)
}

// EnqueueReprobe queues the reading again of stored clips' files, in
// batches.
func (q *AsynqQueue) EnqueueReprobe(ctx context.Context, ids []uuid.UUID) (int, error) {
	return q.enqueueBatches(ctx, ids, reprobeKind)
}
