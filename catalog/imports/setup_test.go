package imports

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"broll/catalog"
	"broll/catalog/media"
	"broll/internal/testkit"
)

type bundle struct {
	ctx context.Context
	// svc imports into cat.
	svc   *Service
	cat   *catalog.Service
	pool  *pgxpool.Pool
	media *media.Local
	queue *testkit.EmbedQueue
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
	q := &testkit.EmbedQueue{}
	svc := newService(pool, store, q)
	return bundle{ctx: context.Background(), svc: svc, cat: svc.cat, pool: pool, media: store, queue: q, src: t.TempDir()}
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

// newService is the import the root builds over a catalog over pool, store
// and queue, its uploads in pool and store.
func newService(pool *pgxpool.Pool, store media.Store, queue catalog.EmbedQueue) *Service {
	return New(catalog.NewService(catalog.ServiceOptions{Pool: pool, Media: store, Queue: queue, Uploads: media.NewUploads(pool, store)}))
}
