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
