package testkit

import (
	"context"
	"sync"

	"github.com/google/uuid"
)

// EmbedQueue is a catalog embedding queue (catalog.EmbedQueue) that takes
// every clip it is given and remembers them, for the tests of the writes
// that queue embeddings: the catalog's and the import's.
type EmbedQueue struct {
	mu  sync.Mutex
	ids []uuid.UUID
}

// EnqueueEmbed takes ids.
func (q *EmbedQueue) EnqueueEmbed(_ context.Context, ids []uuid.UUID) (int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.ids = append(q.ids, ids...)
	return len(ids), nil
}

// Taken returns the clips taken since the last Reset.
func (q *EmbedQueue) Taken() []uuid.UUID {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]uuid.UUID(nil), q.ids...)
}

// Reset forgets the clips taken so far.
func (q *EmbedQueue) Reset() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.ids = nil
}
