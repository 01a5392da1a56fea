package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"broll/catalog"
	"broll/embed"
	"broll/internal/tasks"
)

// Batching design. The catalog queues clips in batches, one asynq task per
// batch (internal/tasks): one dequeue, lease and completion per batch
// instead of per clip. A task's clips are loaded with one query, embedded
// with one embedder call per BatchSize clips and stored with one batched
// write. The task keeps its retry count, backoff and archive entry; a clip
// already embedded, or gone, is done, so a retry redoes only the clips
// that failed, and the clips still failing when the task is archived are
// marked failed for `brollctl clips status` and `clips reembed --failed`.

// errClipGone is a clip whose task outlived it.
var errClipGone = errors.New("clip no longer exists")

// errAlreadyEmbedded: the clip's vector is ready, of the worker's model, and
// its text unchanged since; the task is done without the embedder.
var errAlreadyEmbedded = errors.New("clip already embedded with this model")

// clipsPayload reads a batch task's clips, or a one-clip task's of an
// earlier release.
func clipsPayload(t *asynq.Task) ([]uuid.UUID, error) {
	if t.Type() == tasks.TaskEmbedClip || t.Type() == tasks.TaskProcessMedia {
		var p tasks.ClipPayload
		if err := json.Unmarshal(t.Payload(), &p); err != nil {
			return nil, fmt.Errorf("bad payload: %w: %w", err, asynq.SkipRetry)
		}
		if p.VideoID == uuid.Nil {
			return nil, fmt.Errorf("payload without video_id: %w", asynq.SkipRetry)
		}
		return []uuid.UUID{p.VideoID}, nil
	}
	var p tasks.ClipsPayload
	if err := json.Unmarshal(t.Payload(), &p); err != nil {
		return nil, fmt.Errorf("bad payload: %w: %w", err, asynq.SkipRetry)
	}
	if len(p.VideoIDs) == 0 || slices.Contains(p.VideoIDs, uuid.Nil) {
		return nil, fmt.Errorf("payload without video_ids: %w", asynq.SkipRetry)
	}
	return p.VideoIDs, nil
}

func (w *Worker) handleEmbedClips(ctx context.Context, t *asynq.Task) error {
	ids, err := clipsPayload(t)
	if err != nil {
		return fmt.Errorf("embed clips: %w", err)
	}
	start := time.Now()
	bctx, cancel := context.WithTimeout(ctx, w.opts.BatchTimeout)
	errs := w.embedClips(bctx, ids)
	cancel()
	var failed []uuid.UUID
	var cause error
	for _, id := range ids {
		switch err := errs[id]; {
		case err == nil:
			w.metrics.jobs.WithLabelValues("done").Inc()
		case errors.Is(err, errAlreadyEmbedded):
			w.metrics.jobs.WithLabelValues("current").Inc()
		case errors.Is(err, errClipGone):
			// Retrying cannot bring it back.
			w.metrics.jobs.WithLabelValues("gone").Inc()
		default:
			failed = append(failed, id)
			cause = err
		}
	}
	if len(failed) == 0 {
		w.metrics.jobLatency.Observe(time.Since(start).Seconds())
		return nil
	}
	result := "retry"
	switch {
	case errors.Is(ctx.Err(), context.Canceled):
		// Shutdown: asynq pushes the task back to its queue.
		result = "interrupted"
	case lastAttempt(ctx):
		result = "failed"
		// asynq archives the task when this attempt fails; record it on
		// the clips so that `brollctl clips status` shows them and
		// `clips reembed --failed` finds them. The task's context may be
		// the one that expired.
		mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		for _, id := range failed {
			if merr := w.store.MarkEmbeddingFailed(mctx, id, cause.Error()); merr != nil {
				w.logger.Error("mark embedding failed", "video_id", id, "err", merr)
			}
		}
		w.logger.Warn("embedding gave up", "clips", len(failed), "err", cause)
	}
	w.metrics.jobs.WithLabelValues(result).Add(float64(len(failed)))
	return fmt.Errorf("embed clips: %d of %d failed: %w", len(failed), len(ids), cause)
}

// lastAttempt says whether asynq archives the task if this attempt fails.
func lastAttempt(ctx context.Context) bool {
	retried, ok1 := asynq.GetRetryCount(ctx)
	maxRetry, ok2 := asynq.GetMaxRetry(ctx)
	return ok1 && ok2 && retried >= maxRetry
}

// embedClips loads, embeds and stores the clips, BatchSize per embedder
// call, and returns the error of each clip that did not get its vector.
func (w *Worker) embedClips(ctx context.Context, ids []uuid.UUID) map[uuid.UUID]error {
	errs := make(map[uuid.UUID]error, len(ids))
	failAll := func(err error) map[uuid.UUID]error {
		for _, id := range ids {
			if errs[id] == nil {
				errs[id] = err
			}
		}
		return errs
	}
	inputs, err := w.store.EmbeddingInputs(ctx, ids)
	if err != nil {
		return failAll(fmt.Errorf("load clip text: %w", err))
	}
	model := w.embedder.Model()
	found := make(map[uuid.UUID]bool, len(inputs))
	todo := inputs[:0]
	for _, in := range inputs {
		found[in.ID] = true
		// A task queued again after its clip was embedded (an import
		// retried through another node once the first task had finished)
		// finds the vector current: nothing to embed.
		if in.ReadyWith == model {
			errs[in.ID] = errAlreadyEmbedded
			continue
		}
		todo = append(todo, in)
	}
	for _, id := range ids {
		if !found[id] {
			errs[id] = errClipGone
		}
	}
	for chunk := range slices.Chunk(todo, w.opts.BatchSize) {
		texts := make([]string, len(chunk))
		for i, in := range chunk {
			texts[i] = in.Text
		}
		start := time.Now()
		vecs, err := w.embed(ctx, texts)
		if err != nil {
			for _, in := range chunk {
				errs[in.ID] = err
			}
			continue
		}
		embs := make([]catalog.Embedding, len(chunk))
		for i, in := range chunk {
			embs[i] = catalog.Embedding{ID: in.ID, Vector: vecs[i]}
		}
		if err := w.store.StoreEmbeddings(ctx, model, embs); err != nil {
			for _, in := range chunk {
				errs[in.ID] = fmt.Errorf("store embeddings: %w", err)
			}
			continue
		}
		w.metrics.batchTime.Observe(time.Since(start).Seconds())
	}
	return errs
}

// embed makes the vectors of texts with one embedder call, counted in
// the batch metrics.
func (w *Worker) embed(ctx context.Context, texts []string) ([][]float32, error) {
	model := w.embedder.Model()
	w.metrics.batchSize.Observe(float64(len(texts)))
	ectx, span := w.step(ctx, "embed", len(texts))
	vecs, err := w.embedder.Embed(ectx, embed.Document, texts)
	if err == nil && len(vecs) != len(texts) {
		err = fmt.Errorf("%d vectors for %d texts", len(vecs), len(texts))
	}
	endStep(span, err)
	if err != nil {
		if ctx.Err() != nil {
			// Shutdown or batch timeout: the tasks go back or retry; not
			// the embedder's fault.
			w.logger.Info("embed batch interrupted", "clips", len(texts), "model", model, "err", err)
		} else {
			w.logger.Warn("embed batch failed", "clips", len(texts), "model", model, "err", err)
		}
		w.metrics.batches.WithLabelValues("error").Inc()
		return nil, fmt.Errorf("embed with %s: %w", model, err)
	}
	w.metrics.batches.WithLabelValues("ok").Inc()
	return vecs, nil
}
