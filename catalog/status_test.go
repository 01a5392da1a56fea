package catalog

import (
	"reflect"
	"slices"
	"testing"

	"github.com/google/uuid"

	"broll/internal/apperr"
)

// importN imports n minimal clips and returns their ids in order.
func importN(t *testing.T, b bundle, n int) []uuid.UUID {
	t.Helper()
	b.writeFile(t, "media/full.avi", []byte("RIFF"))
	clips := make([]VideoInput, n)
	ids := make([]uuid.UUID, n)
	for i := range clips {
		ids[i] = uuid.New()
		clips[i] = VideoInput{ID: ids[i].String(), Title: "Man waiting for the bus", Emotion: "neutral",
			Gender: "male", Difficulty: "easy", MediaFile: "media/full.avi"}
	}
	if _, err := b.svc.ImportVideos(b.ctx, clips, b.src, nil); err != nil {
		t.Fatal(err)
	}
	b.queue.reset()
	return ids
}

func TestStatusAndReembed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ids := importN(t, b, 6)
	vec := make([]float32, 768)
	vec[1] = 1
	// 0,1: current model; 2: an old model; 3: failed; 4,5: pending.
	if err := b.svc.StoreEmbeddings(b.ctx, "new", []Embedding{{ids[0], vec}, {ids[1], vec}}); err != nil {
		t.Fatal(err)
	}
	if err := b.svc.StoreEmbeddings(b.ctx, "old", []Embedding{{ids[2], vec}}); err != nil {
		t.Fatal(err)
	}
	if err := b.svc.MarkEmbeddingFailed(b.ctx, ids[3], "ollama unreachable"); err != nil {
		t.Fatal(err)
	}

	st, err := b.svc.Status(b.ctx, "new")
	if err != nil {
		t.Fatal(err)
	}
	st.Media = MediaStatus{} // counted in TestMediaStatus
	if want := (Status{Total: 6, Embedded: 2, Pending: 3, Failed: 1, Model: "new"}); !reflect.DeepEqual(st, want) {
		t.Fatalf("status = %+v, want %+v", st, want)
	}
	if st, _ := b.svc.Status(b.ctx, "old"); st.Embedded != 1 || st.Pending != 4 {
		t.Fatalf("status for old model = %+v", st)
	}

	// Stale: pending and other-model clips, without touching their rows.
	n, err := b.svc.Reembed(b.ctx, "", "new")
	if err != nil || n != 3 {
		t.Fatalf("reembed stale = %d, %v", n, err)
	}
	if q := b.queue.taken(); !sameIDs(q, ids[2], ids[4], ids[5]) {
		t.Fatalf("stale queued %v", q)
	}
	if c := b.count(t, `SELECT count(*) FROM videos WHERE id = $1 AND embedding IS NOT NULL`, ids[2]); c != 1 {
		t.Fatalf("stale reembed dropped the old vector before a new one exists")
	}

	b.queue.reset()
	if n, err = b.svc.Reembed(b.ctx, ReembedFailed, "new"); err != nil || n != 1 {
		t.Fatalf("reembed failed = %d, %v", n, err)
	}
	if q := b.queue.taken(); !sameIDs(q, ids[3]) {
		t.Fatalf("failed queued %v", q)
	}
	if st, _ := b.svc.Status(b.ctx, "new"); st.Failed != 0 || st.Pending != 4 {
		t.Fatalf("after reembed failed: %+v", st)
	}

	b.queue.reset()
	if n, err = b.svc.Reembed(b.ctx, ReembedAll, "new"); err != nil || n != 6 {
		t.Fatalf("reembed all = %d, %v", n, err)
	}
	if st, _ := b.svc.Status(b.ctx, "new"); st.Total != 6 || st.Pending != 6 || st.Embedded != 0 || st.Failed != 0 {
		t.Fatalf("after reembed all: %+v", st)
	}
	// The old vectors keep serving until their replacements are stored.
	if c := b.count(t, `SELECT count(*) FROM videos WHERE embedding_stale AND (embedding IS NOT NULL OR embedding_status <> 'ready')`); c != 6 {
		t.Fatalf("reembed all: %d of 6 clips marked stale with their state kept", c)
	}

	if _, err := b.svc.Reembed(b.ctx, "everything", "new"); apperr.CodeOf(err) != apperr.Invalid {
		t.Fatalf("unknown mode = %v", err)
	}
	if _, err := newService(b.pool, b.media, nil).Reembed(b.ctx, "", "new"); err == nil {
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
