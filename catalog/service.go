package catalog

import (
	"github.com/jackc/pgx/v5/pgxpool"
)

// Service is the catalog store.
type Service struct {
	pool  *pgxpool.Pool
	media MediaStore
	queue EmbedQueue
}

// New returns the catalog over pool, storing media in media and queueing
// embeddings on queue (nil: clips stay pending until `clips reembed`).
func New(pool *pgxpool.Pool, media MediaStore, queue EmbedQueue) *Service {
	return &Service{pool: pool, media: media, queue: queue}
}
