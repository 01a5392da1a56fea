package catalog_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/google/uuid"

	"broll/catalog"
	"broll/catalog/catalogtest"
	"broll/catalog/imports"
	"broll/internal/apperr"
	"broll/internal/testkit"
)

// importN imports n minimal clips and returns their ids in order.
func importN(t *testing.T, b *catalogtest.Catalog, queue *testkit.EmbedQueue, n int) []uuid.UUID {
	t.Helper()
	b.WriteFile(t, "media/full.avi", []byte("RIFF"))
	clips := make([]imports.VideoInput, n)
	ids := make([]uuid.UUID, n)
	for i := range clips {
		ids[i] = uuid.New()
		clips[i] = imports.VideoInput{ID: ids[i].String(), Title: "Man waiting for the bus", Emotion: "neutral",
			Gender: "male", Difficulty: "easy", MediaFile: "media/full.avi"}
	}
	if _, err := b.Imports.ImportVideos(b.Ctx, clips, b.Src, nil); err != nil {
		t.Fatal(err)
	}
	queue.Reset()
	return ids
}

func TestStatusAndReembed(t *testing.T) {
	t.Parallel()
	queue := &testkit.EmbedQueue{}
	b := catalogtest.New(t, queue)
	ids := importN(t, b, queue, 6)
	vec := make([]float32, 768)
	vec[1] = 1
	// 0,1: current model; 2: an old model; 3: failed; 4,5: pending.
	if err := b.Cat.StoreEmbeddings(b.Ctx, "new", []catalog.Embedding{{ID: ids[0], Vector: vec}, {ID: ids[1], Vector: vec}}); err != nil {
		t.Fatal(err)
	}
	if err := b.Cat.StoreEmbeddings(b.Ctx, "old", []catalog.Embedding{{ID: ids[2], Vector: vec}}); err != nil {
		t.Fatal(err)
	}
	if err := b.Cat.MarkEmbeddingFailed(b.Ctx, ids[3], "ollama unreachable"); err != nil {
		t.Fatal(err)
	}

	st, err := b.Cat.Status(b.Ctx, "new")
	if err != nil {
		t.Fatal(err)
	}
	st.Media = catalog.MediaStatus{} // counted in TestMediaStatus
	if want := (catalog.Status{Total: 6, Embedded: 2, Pending: 3, Failed: 1, Model: "new"}); !reflect.DeepEqual(st, want) {
		t.Fatalf("status = %+v, want %+v", st, want)
	}
	if st, _ := b.Cat.Status(b.Ctx, "old"); st.Embedded != 1 || st.Pending != 4 {
		t.Fatalf("status for old model = %+v", st)
	}

	// Stale: pending and other-model clips, without touching their rows.
	n, err := b.Cat.Reembed(b.Ctx, "", "new")
	if err != nil || n != 3 {
		t.Fatalf("reembed stale = %d, %v", n, err)
	}
	if q := queue.Taken(); !sameIDs(q, ids[2], ids[4], ids[5]) {
		t.Fatalf("stale queued %v", q)
	}
	if c := b.Count(t, `SELECT count(*) FROM videos WHERE id = $1 AND embedding IS NOT NULL`, ids[2]); c != 1 {
		t.Fatalf("stale reembed dropped the old vector before a new one exists")
	}

	queue.Reset()
	if n, err = b.Cat.Reembed(b.Ctx, catalog.ReembedFailed, "new"); err != nil || n != 1 {
		t.Fatalf("reembed failed = %d, %v", n, err)
	}
	if q := queue.Taken(); !sameIDs(q, ids[3]) {
		t.Fatalf("failed queued %v", q)
	}
	if st, _ := b.Cat.Status(b.Ctx, "new"); st.Failed != 0 || st.Pending != 4 {
		t.Fatalf("after reembed failed: %+v", st)
	}

	queue.Reset()
	if n, err = b.Cat.Reembed(b.Ctx, catalog.ReembedAll, "new"); err != nil || n != 6 {
		t.Fatalf("reembed all = %d, %v", n, err)
	}
	if st, _ := b.Cat.Status(b.Ctx, "new"); st.Total != 6 || st.Pending != 6 || st.Embedded != 0 || st.Failed != 0 {
		t.Fatalf("after reembed all: %+v", st)
	}
	// The old vectors keep serving until their replacements are stored.
	if c := b.Count(t, `SELECT count(*) FROM videos WHERE embedding_stale AND (embedding IS NOT NULL OR embedding_status <> 'ready')`); c != 6 {
		t.Fatalf("reembed all: %d of 6 clips marked stale with their state kept", c)
	}

	if _, err := b.Cat.Reembed(b.Ctx, "everything", "new"); apperr.CodeOf(err) != apperr.Invalid {
		t.Fatalf("unknown mode = %v", err)
	}
	if _, err := catalogtest.Over(b.Pool, b.Media, nil).Reembed(b.Ctx, "", "new"); err == nil {
		t.Fatalf("reembed without a queue succeeded")
	}
}

func sameIDs(got []uuid.UUID, want ...uuid.UUID) bool {
	if len(got) != len(want) {
		return false
	}
	for _, id := range want {
		if !slices.Contains(got, id) {
			return false
		}
	}
	return true
}
