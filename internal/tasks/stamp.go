package tasks

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
)

// Licence stamps (billing/license, stamp.go) go to the media queue: they
// run ffmpeg, as media jobs do, so a worker without it leaves them too.
const (
	// TaskStampLicense asks a worker to make one purchase's stamped copy.
	TaskStampLicense = "license:stamp"
	// TaskStampBatch carries the purchases one purchase batch committed: a
	// worker queues a TaskStampLicense for each that needs one, so that the
	// purchase path hands Redis one task per batch, not one per purchase.
	TaskStampBatch = "license:stamp-batch"
)

// StampMaxRetry is how often a failing stamp (the store or ffmpeg failing)
// is retried before it is recorded as impossible and the original kept.
const StampMaxRetry = 5

// stampTimeout bounds one remux: a copy of the file, read and written once
// (a 5 GiB upload at a modest 50 MB/s takes under two minutes).
const stampTimeout = 30 * time.Minute

// StampPayload is the body of a TaskStampLicense.
type StampPayload struct {
	PurchaseID uuid.UUID `json:"purchase_id"`
	Trace
}

// StampBatchPayload is the body of a TaskStampBatch.
type StampBatchPayload struct {
	PurchaseIDs []uuid.UUID `json:"purchase_ids"`
	Trace
}

// NewStampTask builds purchase id's stamp task on the media queue of prefix,
// its id the queue's and the purchase's, so that a purchase is queued once
// however many downloads and batches ask; it carries ctx's trace.
func NewStampTask(ctx context.Context, prefix string, id uuid.UUID) *asynq.Task {
	q := MediaQueue(prefix)
	b, _ := json.Marshal(StampPayload{PurchaseID: id, Trace: traceOf(ctx)})
	return asynq.NewTask(TaskStampLicense, b, asynq.Queue(q), asynq.TaskID(stampTaskID(q, id)),
		asynq.MaxRetry(StampMaxRetry), asynq.Timeout(stampTimeout))
}

func stampTaskID(queue string, id uuid.UUID) string { return queue + ":stamp:" + id.String() }

// EnqueueStamps queues one stamp task per purchase (see NewStampTask).
func (q *AsynqQueue) EnqueueStamps(ctx context.Context, ids []uuid.UUID) error {
	queue := MediaQueue(q.prefix)
	for _, id := range ids {
		if err := q.enqueueTask(ctx, NewStampTask(ctx, q.prefix, id), queue, stampTaskID(queue, id)); err != nil {
			return err
		}
	}
	return nil
}

// EnqueueStampBatch queues one task that carries every purchase of ids.
func (q *AsynqQueue) EnqueueStampBatch(ctx context.Context, ids []uuid.UUID) error {
	if len(ids) == 0 {
		return nil
	}
	b, err := json.Marshal(StampBatchPayload{PurchaseIDs: ids, Trace: traceOf(ctx)})
	if err != nil {
		return err
	}
	task := asynq.NewTask(TaskStampBatch, b, asynq.Queue(MediaQueue(q.prefix)),
		asynq.MaxRetry(StampMaxRetry), asynq.Timeout(time.Minute))
	if _, err := q.client.EnqueueContext(ctx, task); err != nil {
		return fmt.Errorf("enqueue stamp batch: %w", err)
	}
	return nil
}
