package catalog_test

import (
	"testing"

	"github.com/google/uuid"

	"broll/catalog"
	"broll/catalog/catalogtest"
	"broll/catalog/imports"
	"broll/catalog/search"
	"broll/internal/apperr"
	"broll/wiring/wiringtest"
)

func TestRetire(t *testing.T) {
	t.Parallel()
	f := catalogtest.NewFixture(t)
	srch := wiringtest.Over(t, f.Pool).Search // a reader's search over the same database
	find := func(q search.Query) search.Page {
		t.Helper()
		p, err := srch.Search(f.Ctx, q, f.QE)
		if err != nil {
			t.Fatalf("search %+v: %v", q, err)
		}
		return p
	}
	buyer, other := f.NewKey(t), f.NewKey(t)
	clip := f.ByKey["coffeeMan"]
	f.Purchase(t, buyer, clip.ID)

	r, err := f.Cat.Retire(f.Ctx, clip.ID)
	if err != nil || r.Already || r.ID != clip.ID || r.RetiredAt.IsZero() {
		t.Fatalf("retire: %+v %v", r, err)
	}
	again, err := f.Cat.Retire(f.Ctx, clip.ID)
	if err != nil || !again.Already || !again.RetiredAt.Equal(r.RetiredAt) {
		t.Fatalf("retire again: %+v %v", again, err)
	}
	if _, err := f.Cat.Retire(f.Ctx, uuid.New()); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("unknown clip: %v", err)
	}

	// Gone from the catalog...
	if p := find(search.Query{Search: "coffee"}); len(p.Videos) != 1 || p.Videos[0].ID == clip.ID {
		t.Fatalf("retired clip searchable: %v", f.Keys(p.Videos))
	}
	if p := find(search.Query{SemanticSearch: "man drinking coffee in the kitchen"}); f.Keys(p.Videos)[0] == "coffeeMan" {
		t.Fatal("retired clip in semantic search")
	}
	if _, err := f.Cat.GetVideo(f.Ctx, clip.ID); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("get retired: %v", err)
	}
	if _, err := f.Cat.GetVideoFor(f.Ctx, clip.ID, other); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("get retired as a stranger: %v", err)
	}
	if _, err := f.Cat.OpenPublicMedia(f.Ctx, clip.ID, catalog.MediaThumbnail); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("media of retired: %v", err)
	}
	// ...but not from its buyer's library.
	v, err := f.Cat.GetVideoFor(f.Ctx, clip.ID, buyer)
	if err != nil || v.RetiredAt == nil || !v.RetiredAt.Equal(r.RetiredAt) {
		t.Fatalf("buyer's view: %+v %v", v, err)
	}
	if p := find(search.Query{Owned: ptr(true), KeyID: buyer}); p.Total != 0 {
		t.Fatal("retired clip listed as owned in search")
	}

	// Importing it again updates it but does not bring it back.
	in := clip.In
	in.Title = "Man drinking coffee in the kitchen, updated"
	if _, err := f.Imports.ImportVideos(f.Ctx, []imports.VideoInput{in}, f.Src, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Cat.GetVideo(f.Ctx, clip.ID); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("re-import revived the clip: %v", err)
	}
}
