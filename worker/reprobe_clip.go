package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hibiken/asynq"
)

// handleReprobeClips reads a batch of stored clips' files again for
// `brollctl clips reprobe` (mediajobs.ReprobeClips): figures corrected,
// unsound files failed and off sale, changed texts queued for embedding.
// A store that cannot be read is retried with the task; on its last
// attempt the clips still open are recorded as errors, left as they were
// (a live clip is not taken off sale for an outage).
func (w *Worker) handleReprobeClips(ctx context.Context, t *asynq.Task) error {
	ids, err := clipsPayload(t)
	if err != nil {
		return fmt.Errorf("reprobe clips: %w", err)
	}
	err = w.media.ReprobeClips(ctx, ids)
	if err == nil {
		w.metrics.mediaJobs.WithLabelValues("reprobed").Add(float64(len(ids)))
		return nil
	}
	result := "retry"
	switch {
	case errors.Is(ctx.Err(), context.Canceled):
		result = "interrupted"
	case lastAttempt(ctx):
		result = "failed"
		gctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if gerr := w.media.ReprobeGaveUp(gctx, ids, err.Error()); gerr != nil {
			w.logger.Error("reprobe gave up", "clips", len(ids), "err", gerr)
		}
	}
	w.metrics.mediaJobs.WithLabelValues(result).Add(float64(len(ids)))
	return fmt.Errorf("reprobe clips: %d clips: %w", len(ids), err)
}
