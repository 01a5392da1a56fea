package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"broll/catalog"
	"broll/catalog/media"
	"broll/internal/tasks"
)

// handleProcessMedia probes one clip's file and makes its preview and
// thumbnail (catalog.ProcessMedia). A file the probe cannot read fails the
// clip at once: retrying would read the same bytes. Other failures (the
// store, ffmpeg) are retried with the embedding jobs' backoff, and the
// clip is marked failed when asynq archives the task.
func (w *Worker) handleProcessMedia(ctx context.Context, t *asynq.Task) error {
	var p tasks.ClipPayload
	if err := json.Unmarshal(t.Payload(), &p); err != nil {
		return fmt.Errorf("media job: bad payload: %w: %w", err, asynq.SkipRetry)
	}
	if p.VideoID == uuid.Nil {
		return fmt.Errorf("media job: payload without video_id: %w", asynq.SkipRetry)
	}
	start := time.Now()
	err := w.catalog.ProcessMedia(ctx, p.VideoID)
	var unreadable *media.UnreadableError
	switch {
	case err == nil:
		w.metrics.mediaJobs.WithLabelValues("done").Inc()
		w.metrics.mediaLatency.Observe(time.Since(start).Seconds())
		return nil
	case errors.Is(err, catalog.ErrVideoGone):
		w.metrics.mediaJobs.WithLabelValues("gone").Inc()
		return fmt.Errorf("media job %s: %w: %w", p.VideoID, err, asynq.SkipRetry)
	case errors.Is(ctx.Err(), context.Canceled):
		w.metrics.mediaJobs.WithLabelValues("interrupted").Inc()
		return fmt.Errorf("media job %s: %w", p.VideoID, err)
	case errors.As(err, &unreadable):
		w.metrics.mediaJobs.WithLabelValues("refused").Inc()
		w.markMediaFailed(ctx, p.VideoID, unreadable.Reason)
		return fmt.Errorf("media job %s: %w: %w", p.VideoID, err, asynq.SkipRetry)
	}
	if !lastAttempt(ctx) {
		w.metrics.mediaJobs.WithLabelValues("retry").Inc()
	} else {
		w.metrics.mediaJobs.WithLabelValues("failed").Inc()
		w.markMediaFailed(ctx, p.VideoID, err.Error())
	}
	return fmt.Errorf("media job %s: %w", p.VideoID, err)
}

func (w *Worker) markMediaFailed(ctx context.Context, id uuid.UUID, reason string) {
	// The task's context may be the one that expired.
	mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := w.catalog.MarkMediaFailed(mctx, id, reason); err != nil {
		w.logger.Error("mark media failed", "video_id", id, "err", err)
	}
	w.logger.Warn("media processing gave up", "video_id", id, "reason", reason)
}
