package catalog

import (
	"testing"

	"github.com/google/uuid"

	"broll/internal/apperr"
)

func TestRetire(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	buyer, other := f.newKey(t), f.newKey(t)
	clip := f.byKey["coffeeMan"]
	f.purchase(t, buyer, clip.id)

	r, err := f.svc.Retire(f.ctx, clip.id)
	if err != nil || r.Already || r.ID != clip.id || r.RetiredAt.IsZero() {
		t.Fatalf("retire: %+v %v", r, err)
	}
	again, err := f.svc.Retire(f.ctx, clip.id)
	if err != nil || !again.Already || !again.RetiredAt.Equal(r.RetiredAt) {
		t.Fatalf("retire again: %+v %v", again, err)
	}
	if _, err := f.svc.Retire(f.ctx, uuid.New()); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("unknown clip: %v", err)
	}

	// Gone from the catalog...
	if p := f.search(t, Query{Search: "coffee"}); len(p.Videos) != 1 || p.Videos[0].ID == clip.id {
		t.Fatalf("retired clip searchable: %v", f.keys(p.Videos))
	}
	if p := f.search(t, Query{SemanticSearch: "man drinking coffee in the kitchen"}); f.keys(p.Videos)[0] == "coffeeMan" {
		t.Fatal("retired clip in semantic search")
	}
	if _, err := f.svc.GetVideo(f.ctx, clip.id); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("get retired: %v", err)
	}
	if _, err := f.svc.GetVideoFor(f.ctx, clip.id, other); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("get retired as a stranger: %v", err)
	}
	if _, err := f.svc.OpenPublicMedia(f.ctx, clip.id, MediaThumbnail); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("media of retired: %v", err)
	}
	// ...but not from its buyer's library.
	v, err := f.svc.GetVideoFor(f.ctx, clip.id, buyer)
	if err != nil || v.RetiredAt == nil || !v.RetiredAt.Equal(r.RetiredAt) {
		t.Fatalf("buyer's view: %+v %v", v, err)
	}
	if p := f.search(t, Query{Owned: ptr(true), KeyID: buyer}); p.Total != 0 {
		t.Fatal("retired clip listed as owned in search")
	}

	// Importing it again updates it but does not bring it back.
	in := clip.in
	in.Title = "Man drinking coffee in the kitchen, updated"
	if _, err := f.svc.ImportVideos(f.ctx, []VideoInput{in}, f.src, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.GetVideo(f.ctx, clip.id); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("re-import revived the clip: %v", err)
	}
}
