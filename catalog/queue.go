package catalog

import (
	"context"

	"github.com/google/uuid"
)

// EmbedQueue hands clips to the embedding worker. internal/tasks implements
// it with asynq; the catalog sees only this interface.
type EmbedQueue interface {
	EnqueueEmbed(ctx context.Context, ids []uuid.UUID) (int, error)
}

// MediaQueue hands clips to the media worker. An EmbedQueue that is not
// one leaves imported clips' media pending.
type MediaQueue interface {
	EnqueueMedia(ctx context.Context, ids []uuid.UUID) (int, error)
}

// enqueueMedia queues every imported clip for probing; without a media
// queue they stay pending.
func (s *Service) enqueueMedia(ctx context.Context, ids []uuid.UUID) error {
	mq, ok := s.queue.(MediaQueue)
	if !ok || len(ids) == 0 {
		return nil
	}
	_, err := mq.EnqueueMedia(ctx, ids)
	return err
}

// enqueuePreviews queues clips whose preview or thumbnail is to be made;
// relayBatch claims such jobs only for a queue that takes them.
func (s *Service) enqueuePreviews(ctx context.Context, ids []uuid.UUID) error {
	pq, ok := s.queue.(PreviewQueue)
	if !ok || len(ids) == 0 {
		return nil
	}
	_, err := pq.EnqueuePreviews(ctx, ids)
	return err
}

// PreviewQueue hands clips whose preview or thumbnail is still to be made
// to the workers that make them.
type PreviewQueue interface {
	EnqueuePreviews(ctx context.Context, ids []uuid.UUID) (int, error)
}

// ReprobeQueue hands clips to be probed again to the media workers.
type ReprobeQueue interface {
	EnqueueReprobe(ctx context.Context, ids []uuid.UUID) (int, error)
}

// enqueueReprobe hands clips to the queue's reprobe tasks; relayBatch
// claims such jobs only for a queue that takes them.
func (s *Service) enqueueReprobe(ctx context.Context, ids []uuid.UUID) error {
	rq, ok := s.queue.(ReprobeQueue)
	if !ok || len(ids) == 0 {
		return nil
	}
	_, err := rq.EnqueueReprobe(ctx, ids)
	return err
}
