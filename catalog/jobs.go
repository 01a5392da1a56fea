package catalog

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"broll/internal/database"
	"broll/internal/telemetry"
)

// The job outbox (table job_outbox, migration 00019). A change that needs
// work from the worker (an import: media probing and embeddings; the
// probe changing a clip's text; a reembed; a reprobe) records its jobs in its own
// transaction, so the work exists exactly when the change does. Redis
// being away then delays the work and never loses it: right after the
// commit the writer tries to hand its jobs to the queue (relay), and what
// it could not hand over stays recorded for the worker's relay
// (RelayJobs), which moves it once Redis is back. A job handed over twice
// (a relay that queued it but could not delete its row) is harmless: tasks
// are unique per clip, and a clip already done is skipped by its handler.

// Kinds of job.
const (
	jobEmbed    = "embed"
	jobMedia    = "media"
	jobPreviews = "previews" // migration 00023
	jobReprobe  = "reprobe"  // migration 00027
)

// relayBatch bounds the jobs one relay transaction holds locked while it
// talks to the queue.
const relayBatch = 5000

// recordJobs records one job of kind per clip, each keeping the trace of
// the work that recorded it, and returns the jobs' ids.
func recordJobs(ctx context.Context, q database.Queryer, kind string, ids []uuid.UUID) ([]int64, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	jobs, err := database.Select(ctx, q, pgx.RowTo[int64], sqlRecordJobs, kind, ids, telemetry.Traceparent(ctx))
	if err != nil {
		return nil, fmt.Errorf("record %s jobs: %w", kind, err)
	}
	return jobs, nil
}

// RelayJobs hands every recorded job to the queue, oldest first, and
// returns how many it moved. A batch the queue refuses stays recorded
// (the error says why); the worker calls this periodically.
func (s *Service) RelayJobs(ctx context.Context) (int, error) {
	return s.relay(ctx, nil)
}

// relay moves the jobs given (all when only is nil) to the queue. Without
// a queue they wait for a worker's relay.
func (s *Service) relay(ctx context.Context, only []int64) (int, error) {
	if s.queue == nil || (only != nil && len(only) == 0) {
		return 0, nil
	}
	total := 0
	for {
		n, err := s.relayBatch(ctx, only)
		total += n
		if err != nil || n < relayBatch {
			return total, err
		}
	}
}

func (s *Service) relayBatch(ctx context.Context, only []int64) (int, error) {
	_, media := s.queue.(MediaQueue)
	_, previews := s.queue.(PreviewQueue)
	_, reprobe := s.queue.(ReprobeQueue)
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return 0, fmt.Errorf("relay jobs: %w", err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	rows, err := tx.Query(ctx, sqlClaimJobs, relayBatch, only, media, previews, reprobe)
	if err != nil {
		return 0, fmt.Errorf("relay jobs: %w", err)
	}
	var jobs []int64
	var embedIDs, mediaIDs, previewIDs, reprobeIDs []uuid.UUID
	var job int64
	var kind, traceparent, first string
	var id uuid.UUID
	if _, err := pgx.ForEachRow(rows, []any{&job, &kind, &id, &traceparent}, func() error {
		jobs = append(jobs, job)
		first = cmp.Or(first, traceparent)
		switch kind {
		case jobMedia:
			mediaIDs = append(mediaIDs, id)
		case jobPreviews:
			previewIDs = append(previewIDs, id)
		case jobReprobe:
			reprobeIDs = append(reprobeIDs, id)
		default:
			embedIDs = append(embedIDs, id)
		}
		return nil
	}); err != nil {
		return 0, fmt.Errorf("relay jobs: %w", err)
	}
	if len(jobs) == 0 {
		return 0, nil
	}
	ctx, span := s.startRelay(ctx, first, len(jobs))
	defer span.End()
	slices.SortFunc(embedIDs, func(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) })
	if _, err := s.enqueue(ctx, slices.Compact(embedIDs)); err != nil {
		return 0, fmt.Errorf("relay jobs: %w", err)
	}
	if err := s.enqueueMedia(ctx, mediaIDs); err != nil {
		return 0, fmt.Errorf("relay jobs: %w", err)
	}
	if err := s.enqueuePreviews(ctx, previewIDs); err != nil {
		return 0, fmt.Errorf("relay jobs: %w", err)
	}
	if err := s.enqueueReprobe(ctx, reprobeIDs); err != nil {
		return 0, fmt.Errorf("relay jobs: %w", err)
	}
	if _, err := tx.Exec(ctx, sqlDeleteJobs, jobs); err != nil {
		return 0, fmt.Errorf("relay jobs: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, fmt.Errorf("relay jobs: %w", err)
	}
	return len(jobs), nil
}

// startRelay starts the span of a relay that moves n jobs: within the
// traced work that relays them (a writer relays its own jobs after its
// commit), or else (the worker's relay of jobs left behind) as a child of
// the span that recorded the first of them, so that the jobs' tasks carry
// the trace of the request that wrote them.
func (s *Service) startRelay(ctx context.Context, recorded string, n int) (context.Context, trace.Span) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		ctx = telemetry.FromTraceparent(ctx, recorded)
	}
	ctx, span := s.tracer.Start(ctx, "outbox relay", trace.WithSpanKind(trace.SpanKindProducer))
	if span.IsRecording() {
		span.SetAttributes(attribute.Int("broll.jobs", n))
	}
	return ctx, span
}

// Embedding tasks are enqueued in chunks from a few goroutines, because one
// Redis round trip per clip would dominate a large import.
const (
	enqueueChunk   = 500
	enqueueWorkers = 8
)

// enqueue hands ids to the embedding queue and returns how many it took.
// Without a queue the clips stay pending until `brollctl clips reembed`.
func (s *Service) enqueue(ctx context.Context, ids []uuid.UUID) (int, error) {
	if s.queue == nil || len(ids) == 0 {
		return 0, nil
	}
	if len(ids) <= enqueueChunk {
		return s.queue.EnqueueEmbed(ctx, ids)
	}
	chunks := make(chan []uuid.UUID)
	var mu sync.Mutex
	var total int
	var firstErr error
	var wg sync.WaitGroup
	for range min(enqueueWorkers, runtime.GOMAXPROCS(0)*2) {
		wg.Go(func() {
			for c := range chunks {
				n, err := s.queue.EnqueueEmbed(ctx, c)
				mu.Lock()
				total += n
				if err != nil && firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		})
	}
	for c := range slices.Chunk(ids, enqueueChunk) {
		chunks <- c
	}
	close(chunks)
	wg.Wait()
	return total, firstErr
}
