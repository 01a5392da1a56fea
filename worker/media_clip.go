package worker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"broll/catalog/media"
	"broll/catalog/mediajobs"
)

// handleProbeClips runs a media batch: probe the clips' files, embed the
// texts the probe settled, and put the sound clips on sale with their
// vectors in one transaction (mediajobs.ProbePending, mediajobs.StoreProbed).
// A file the probe refuses fails its clip at once: retrying would read the
// same bytes. An embedder that fails does not hold the clips back: they
// go on sale and their embedding is queued on its own. Clips whose probe
// failed otherwise (the store) are retried with the task, and marked
// failed when asynq archives it.
func (w *Worker) handleProbeClips(ctx context.Context, t *asynq.Task) error {
	ids, err := clipsPayload(t)
	if err != nil {
		return fmt.Errorf("media clips: %w", err)
	}
	start := time.Now()
	model := w.embedder.Model()
	pctx, span := w.step(ctx, "probe", len(ids))
	clips, err := w.media.ProbePending(pctx, ids, model)
	endStep(span, err)
	if err != nil {
		return w.mediaFailed(ctx, ids, err)
	}
	var need []mediajobs.ProbedClip
	for _, c := range clips {
		if c.Err == nil && c.NeedsVector {
			need = append(need, c)
		}
	}
	vectors := make(map[uuid.UUID][]float32, len(need))
	for chunk := range slices.Chunk(need, w.opts.BatchSize) {
		texts := make([]string, len(chunk))
		for i, c := range chunk {
			texts[i] = c.Text
		}
		// A failed call leaves its clips without vectors: StoreProbed
		// queues their embedding.
		if vecs, err := w.embed(ctx, texts); err == nil {
			for i, c := range chunk {
				vectors[c.ID] = vecs[i]
			}
		}
	}
	res, err := w.media.StoreProbed(ctx, model, clips, vectors)
	if err != nil {
		return w.mediaFailed(ctx, ids, err)
	}
	w.metrics.mediaJobs.WithLabelValues("done").Add(float64(res.Ready))
	w.metrics.mediaJobs.WithLabelValues("refused").Add(float64(res.Refused))
	w.metrics.jobs.WithLabelValues("done").Add(float64(res.Embedded))
	var again []uuid.UUID
	var cause error
	for _, c := range clips {
		var unreadable *media.UnreadableError
		if c.Err != nil && !errors.As(c.Err, &unreadable) {
			again, cause = append(again, c.ID), c.Err
		}
	}
	if len(again) == 0 {
		w.metrics.mediaLatency.Observe(time.Since(start).Seconds())
		return nil
	}
	return w.mediaFailed(ctx, again, cause)
}

// mediaFailed decides what becomes of clips whose media work failed for a
// reason worth a retry: the task is retried, or, on its last attempt, the
// clips are marked failed. It returns the task's error.
func (w *Worker) mediaFailed(ctx context.Context, ids []uuid.UUID, cause error) error {
	result := "retry"
	switch {
	case errors.Is(ctx.Err(), context.Canceled):
		result = "interrupted"
	case lastAttempt(ctx):
		result = "failed"
		for _, id := range ids {
			w.markMediaFailed(ctx, id, cause.Error())
		}
	}
	w.metrics.mediaJobs.WithLabelValues(result).Add(float64(len(ids)))
	return fmt.Errorf("media clips: %d clips: %w", len(ids), cause)
}

// handleProcessMedia runs the one-clip media task of an earlier release:
// probe, preview and thumbnail in one go (mediajobs.ProcessMedia).
func (w *Worker) handleProcessMedia(ctx context.Context, t *asynq.Task) error {
	ids, err := clipsPayload(t)
	if err != nil {
		return fmt.Errorf("media job: %w", err)
	}
	id := ids[0]
	start := time.Now()
	err = w.media.ProcessMedia(ctx, id)
	var unreadable *media.UnreadableError
	switch {
	case err == nil:
		w.metrics.mediaJobs.WithLabelValues("done").Inc()
		w.metrics.mediaLatency.Observe(time.Since(start).Seconds())
		return nil
	case errors.Is(err, mediajobs.ErrVideoGone):
		w.metrics.mediaJobs.WithLabelValues("gone").Inc()
		return fmt.Errorf("media job %s: %w: %w", id, err, asynq.SkipRetry)
	case errors.As(err, &unreadable):
		w.metrics.mediaJobs.WithLabelValues("refused").Inc()
		w.markMediaFailed(ctx, id, unreadable.Reason)
		return fmt.Errorf("media job %s: %w: %w", id, err, asynq.SkipRetry)
	}
	return w.mediaFailed(ctx, ids, err)
}

func (w *Worker) markMediaFailed(ctx context.Context, id uuid.UUID, reason string) {
	// The task's context may be the one that expired.
	mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := w.media.MarkMediaFailed(mctx, id, reason); err != nil {
		w.logger.Error("mark media failed", "video_id", id, "err", err)
	}
	w.logger.Warn("media processing gave up", "video_id", id, "reason", reason)
}

// handleMakePreviews makes the previews and thumbnails of a batch of
// clips on sale (mediajobs.MakePreviews), on the previews server with its
// own concurrency. A clip whose preview fails stays on sale without one
// (its thumbnail or nothing is shown); the task is retried and then
// archived.
func (w *Worker) handleMakePreviews(ctx context.Context, t *asynq.Task) error {
	ids, err := clipsPayload(t)
	if err != nil {
		return fmt.Errorf("previews: %w", err)
	}
	var failed int
	var cause error
	for _, id := range ids {
		if err := w.media.MakePreviews(ctx, id); err != nil {
			failed, cause = failed+1, err
			if ctx.Err() != nil {
				break
			}
			continue
		}
		w.metrics.previewJobs.WithLabelValues("done").Inc()
	}
	if failed == 0 {
		return nil
	}
	result := "retry"
	if lastAttempt(ctx) {
		result = "failed"
		w.logger.Warn("previews gave up", "clips", failed, "err", cause)
	}
	w.metrics.previewJobs.WithLabelValues(result).Add(float64(failed))
	return fmt.Errorf("previews: %d of %d clips: %w", failed, len(ids), cause)
}
