package mediajobs

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"broll/catalog"
	"broll/catalog/imports"
	"broll/catalog/media"
	"broll/internal/testkit"
)

// takeEmbeds is an EmbedQueue that takes every embedding and keeps none.
type takeEmbeds struct{}

func (takeEmbeds) EnqueueEmbed(_ context.Context, ids []uuid.UUID) (int, error) { return len(ids), nil }

type bundle struct {
	ctx context.Context
	// imp imports into cat the clips the jobs of svc then work on.
	imp   *imports.Service
	cat   *catalog.Service
	svc   *Service
	pool  *pgxpool.Pool
	media *media.Local
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
	cat := catalog.NewService(catalog.ServiceOptions{Pool: pool, Media: store, Queue: takeEmbeds{}, Uploads: media.NewUploads(pool, store)})
	return bundle{ctx: context.Background(), imp: imports.New(cat), cat: cat, svc: New(cat), pool: pool, media: store, src: t.TempDir()}
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

// importN imports n minimal clips and returns their ids in order.
func importN(t *testing.T, b bundle, n int) []uuid.UUID {
	t.Helper()
	b.writeFile(t, "media/full.avi", []byte("RIFF"))
	clips := make([]imports.VideoInput, n)
	ids := make([]uuid.UUID, n)
	for i := range clips {
		ids[i] = uuid.New()
		clips[i] = imports.VideoInput{ID: ids[i].String(), Title: "Man waiting for the bus", Emotion: "neutral",
			Gender: "male", Difficulty: "easy", MediaFile: "media/full.avi"}
	}
	if _, err := b.imp.ImportVideos(b.ctx, clips, b.src, nil); err != nil {
		t.Fatal(err)
	}
	return ids
}
