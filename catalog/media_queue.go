package catalog

import (
	"context"

	"github.com/google/uuid"
)

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
