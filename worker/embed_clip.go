package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"broll/catalog"
	"broll/embed"
	"broll/internal/tasks"
)

// Batching design. The catalog enqueues one asynq task per clip, unique by
// clip id; each task keeps its own retry count, backoff, archive entry and
// `clips status` line. The handler of a task does not call the embedder
// itself: it hands its clip to the batcher and waits. The batcher gathers
// the clips of concurrently running tasks (up to BatchSize, waiting at most
// BatchWait once it has one) and loads, embeds and stores them with one
// query, one embedder call and one batched write, then tells each task how
// its clip fared. An import of many clips fills batches at once; a lone clip
// waits only BatchWait.
//
// asynq's own group aggregation was the alternative. It was not chosen: its
// grace period cannot go below one second (NewServer panics), which delays
// every new clip; an aggregated task is a new task, so per-clip retries,
// archiving and task ids are lost, and one bad clip fails its whole group;
// and the enqueue side would have to change.

// errClipGone is a clip whose task outlived it.
var errClipGone = errors.New("clip no longer exists")

// errAlreadyEmbedded: the clip's vector is ready, of the worker's model, and
// its text unchanged since; the task is done without the embedder.
var errAlreadyEmbedded = errors.New("clip already embedded with this model")

func (w *Worker) handleEmbedClip(ctx context.Context, t *asynq.Task) error {
	var p tasks.ClipPayload
	if err := json.Unmarshal(t.Payload(), &p); err != nil {
		return fmt.Errorf("embed clip: bad payload: %w: %w", err, asynq.SkipRetry)
	}
	if p.VideoID == uuid.Nil {
		return fmt.Errorf("embed clip: payload without video_id: %w", asynq.SkipRetry)
	}
	start := time.Now()
	err := w.batcher.submit(ctx, p.VideoID)
	switch {
	case err == nil:
		w.metrics.jobs.WithLabelValues("done").Inc()
		w.metrics.jobLatency.Observe(time.Since(start).Seconds())
		return nil
	case errors.Is(err, errAlreadyEmbedded):
		w.metrics.jobs.WithLabelValues("current").Inc()
		return nil
	case errors.Is(err, errClipGone):
		// Retrying cannot bring it back; archive the task at once.
		w.metrics.jobs.WithLabelValues("gone").Inc()
		return fmt.Errorf("embed clip %s: %w: %w", p.VideoID, err, asynq.SkipRetry)
	case errors.Is(ctx.Err(), context.Canceled):
		// Shutdown: asynq has pushed the task back to its queue.
		w.metrics.jobs.WithLabelValues("interrupted").Inc()
		return fmt.Errorf("embed clip %s: %w", p.VideoID, err)
	}
	if !lastAttempt(ctx) {
		w.metrics.jobs.WithLabelValues("retry").Inc()
	} else {
		w.metrics.jobs.WithLabelValues("failed").Inc()
		// asynq archives the task when this attempt fails; record it on the
		// clip so that `brollctl clips status` shows it and
		// `clips reembed --failed` finds it. The task's context may be the
		// one that expired.
		mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if merr := w.store.MarkEmbeddingFailed(mctx, p.VideoID, err.Error()); merr != nil {
			w.logger.Error("mark embedding failed", "video_id", p.VideoID, "err", merr)
		}
		w.logger.Warn("embedding gave up", "video_id", p.VideoID, "err", err)
	}
	return fmt.Errorf("embed clip %s: %w", p.VideoID, err)
}

// lastAttempt says whether asynq archives the task if this attempt fails.
func lastAttempt(ctx context.Context) bool {
	retried, ok1 := asynq.GetRetryCount(ctx)
	maxRetry, ok2 := asynq.GetMaxRetry(ctx)
	return ok1 && ok2 && retried >= maxRetry
}

// embedClips loads, embeds and stores one batch, and returns the error of
// each clip that did not get its vector.
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
	start := time.Now()
	inputs, err := w.store.EmbeddingInputs(ctx, ids)
	if err != nil {
		return failAll(fmt.Errorf("load clip text: %w", err))
	}
	model := w.embedder.Model()
	found := make(map[uuid.UUID]bool, len(inputs))
	todo := inputs[:0]
	var texts []string
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
		texts = append(texts, in.Text)
	}
	inputs = todo
	for _, id := range ids {
		if !found[id] {
			errs[id] = errClipGone
		}
	}
	if len(inputs) == 0 {
		return errs
	}
	w.metrics.batchSize.Observe(float64(len(texts)))
	vecs, err := w.embedder.Embed(ctx, embed.Document, texts)
	if err == nil && len(vecs) != len(texts) {
		err = fmt.Errorf("%d vectors for %d texts", len(vecs), len(texts))
	}
	if err != nil {
		if ctx.Err() != nil {
			// Shutdown or batch timeout: the tasks go back or retry; not
			// the embedder's fault.
			w.logger.Info("embed batch interrupted", "clips", len(inputs), "model", model, "err", err)
		} else {
			w.logger.Warn("embed batch failed", "clips", len(inputs), "model", model, "err", err)
		}
		w.metrics.batches.WithLabelValues("error").Inc()
		return failAll(fmt.Errorf("embed with %s: %w", model, err))
	}
	embs := make([]catalog.Embedding, len(inputs))
	for i, in := range inputs {
		embs[i] = catalog.Embedding{ID: in.ID, Vector: vecs[i]}
	}
	if err := w.store.StoreEmbeddings(ctx, model, embs); err != nil {
		return failAll(fmt.Errorf("store embeddings: %w", err))
	}
	w.metrics.batches.WithLabelValues("ok").Inc()
	w.metrics.batchTime.Observe(time.Since(start).Seconds())
	w.logger.Debug("embedded batch", "clips", len(inputs), "model", model, "took", time.Since(start))
	return errs
}

// batcher gathers clips from concurrently running tasks into batches.
type batcher struct {
	size    int
	wait    time.Duration
	timeout time.Duration
	slots   chan struct{} // bounds the batches in flight
	process func(ctx context.Context, ids []uuid.UUID) map[uuid.UUID]error

	requests chan batchRequest
	stopped  chan struct{}
}

type batchRequest struct {
	id   uuid.UUID
	done chan error // buffered: the batch never waits for a task that gave up
}

var errWorkerStopped = errors.New("worker stopped")

func newBatcher(size int, wait, timeout time.Duration, inFlight int,
	process func(context.Context, []uuid.UUID) map[uuid.UUID]error) *batcher {
	return &batcher{
		size: size, wait: wait, timeout: timeout, process: process,
		slots:    make(chan struct{}, inFlight),
		requests: make(chan batchRequest),
		stopped:  make(chan struct{}),
	}
}

// submit queues id for the next batch and waits for its outcome.
func (b *batcher) submit(ctx context.Context, id uuid.UUID) error {
	r := batchRequest{id: id, done: make(chan error, 1)}
	select {
	case b.requests <- r:
	case <-ctx.Done():
		return ctx.Err()
	case <-b.stopped:
		return errWorkerStopped
	}
	select {
	case err := <-r.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// run forms batches until ctx ends, then waits for the batches in flight.
func (b *batcher) run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(b.stopped)
	for {
		var batch []batchRequest
		select {
		case <-ctx.Done():
			return
		case r := <-b.requests:
			batch = append(batch, r)
		}
		timer := time.NewTimer(b.wait)
	fill:
		for len(batch) < b.size {
			select {
			case r := <-b.requests:
				batch = append(batch, r)
			case <-timer.C:
				break fill
			case <-ctx.Done():
				break fill
			}
		}
		timer.Stop()
		// While every slot is busy, submitters block: backpressure up to
		// asynq, which stops taking tasks when its own slots are full.
		select {
		case b.slots <- struct{}{}:
		case <-ctx.Done():
			finish(batch, nil, ctx.Err())
			return
		}
		wg.Go(func() {
			defer func() { <-b.slots }()
			bctx, cancel := context.WithTimeout(ctx, b.timeout)
			defer cancel()
			ids := make([]uuid.UUID, 0, len(batch))
			seen := make(map[uuid.UUID]bool, len(batch))
			for _, r := range batch {
				if !seen[r.id] {
					seen[r.id] = true
					ids = append(ids, r.id)
				}
			}
			finish(batch, b.process(bctx, ids), nil)
		})
	}
}

func finish(batch []batchRequest, errs map[uuid.UUID]error, all error) {
	for _, r := range batch {
		if all != nil {
			r.done <- all
		} else {
			r.done <- errs[r.id]
		}
	}
}
