package catalog

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"broll/catalog/media"
	"broll/internal/testkit"
)

// recordingQueue is an EmbedQueue that remembers what it was given.
type recordingQueue struct {
	mu  sync.Mutex
	ids []uuid.UUID
}

func (q *recordingQueue) EnqueueEmbed(_ context.Context, ids []uuid.UUID) (int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.ids = append(q.ids, ids...)
	return len(ids), nil
}

func (q *recordingQueue) taken() []uuid.UUID {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]uuid.UUID(nil), q.ids...)
}

func (q *recordingQueue) reset() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.ids = nil
}

type bundle struct {
	ctx   context.Context
	svc   *Service
	pool  *pgxpool.Pool
	media *media.Local
	queue *recordingQueue
	// src is a directory for import sources: clips.jsonl and its files.
	src string
}

func setup(t *testing.T) bundle {
	t.Helper()
	pool, _ := testkit.NewPool(t)
	store, err := media.NewLocal(filepath.Join(t.TempDir(), "media"))
	if err != nil {
		t.Fatal(err)
	}
	q := &recordingQueue{}
	return bundle{ctx: context.Background(), svc: newService(pool, store, q), pool: pool, media: store, queue: q, src: t.TempDir()}
}

// writeFile writes a source file under b.src and returns its relative path.
func (b bundle) writeFile(t *testing.T, rel string, data []byte) string {
	t.Helper()
	return testkit.WriteFile(t, b.src, rel, data)
}

func (b bundle) count(t *testing.T, query string, args ...any) int {
	t.Helper()
	return testkit.Count(t, b.pool, query, args...)
}

// newService is the catalog the root builds over pool, store and queue,
// its uploads in pool and store.
func newService(pool *pgxpool.Pool, store media.Store, queue EmbedQueue) *Service {
	return NewService(ServiceOptions{Pool: pool, Media: store, Queue: queue, Uploads: media.NewUploads(pool, store)})
}
