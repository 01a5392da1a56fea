package catalog_test

import (
	"io"
	"reflect"
	"testing"

	"github.com/google/uuid"

	"broll/catalog"
	"broll/catalog/catalogtest"
	"broll/catalog/imports"
	"broll/internal/apperr"
)

func TestGetVideo(t *testing.T) {
	t.Parallel()
	f := catalogtest.NewFixture(t)
	c := f.ByKey["laughCouch"]
	v, err := f.Cat.GetVideo(f.Ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := catalog.Video{
		ID: c.ID, Title: c.In.Title, Tags: []string{"phone", "couch", "lol"}, Emotion: "laughing",
		Gender: "female", AgeRange: ptr("18-24"), Location: ptr("home"), MediaType: "video",
		Orientation: ptr("vertical"), DurationSeconds: ptr(12.5), Difficulty: "easy", Price: 500,
		ViralityScore: ptr(80), Model: &catalog.VideoModel{ID: "m-ava", Name: "Ava Stone"},
		HasPreview: true, HasThumbnail: true, Description: "",
	}
	want.CreatedAt = v.CreatedAt
	if v.Version == 0 {
		t.Fatal("the clip was read without its row's version")
	}
	want.Version = v.Version
	if !reflect.DeepEqual(v, want) {
		t.Fatalf("got  %+v\nwant %+v", v, want)
	}

	// Nullable fields stay null; the price follows the tier.
	if _, err := f.Cat.SetTier(f.Ctx, "easy", 750); err != nil {
		t.Fatal(err)
	}
	v, err = f.Cat.GetVideo(f.Ctx, f.ByKey["crying"].ID)
	if err != nil {
		t.Fatal(err)
	}
	if v.Price != 750 || v.DurationSeconds != nil || v.ViralityScore != nil || v.Model != nil || v.Width != nil ||
		v.MediaType != "image" || v.HasPreview != false || v.Similarity != nil {
		t.Fatalf("crying: %+v", v)
	}
	if _, err := f.Cat.GetVideo(f.Ctx, uuid.New()); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("unknown: %v", err)
	}
}

func TestOpenPublicMedia(t *testing.T) {
	t.Parallel()
	f := catalogtest.NewFixture(t)
	read := func(id uuid.UUID, kind string) (string, catalog.PublicMedia) {
		t.Helper()
		m, err := f.Cat.OpenPublicMedia(f.Ctx, id, kind)
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		defer m.File.Close()
		b, err := io.ReadAll(m.File)
		if err != nil || int64(len(b)) != m.File.Size() {
			t.Fatalf("read %d of %d bytes: %v", len(b), m.File.Size(), err)
		}
		return string(b), m
	}
	withFiles := f.ByKey["laughCouch"].ID // imported with preview and thumbnail
	body, m := read(withFiles, catalog.MediaPreview)
	if body != "GIF89a-preview" || m.ContentType != "image/gif" || m.ETag == "" {
		t.Fatalf("preview: %q %+v", body, m)
	}
	body, m = read(withFiles, catalog.MediaThumbnail)
	if body != "\xff\xd8\xff-thumbnail" || m.ContentType != "image/jpeg" {
		t.Fatalf("thumbnail: %q %+v", body, m)
	}

	// A clip without either has neither.
	bare := f.ByKey["carSmile"].ID
	for _, kind := range []string{catalog.MediaPreview, catalog.MediaThumbnail} {
		if _, err := f.Cat.OpenPublicMedia(f.Ctx, bare, kind); apperr.CodeOf(err) != apperr.NotFound {
			t.Fatalf("%s of a clip without one: %v", kind, err)
		}
	}
	if _, err := f.Cat.OpenPublicMedia(f.Ctx, uuid.New(), catalog.MediaPreview); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("unknown clip: %v", err)
	}

	// A clip with a thumbnail only previews with it; a re-import changes
	// the ETag.
	in := f.ByKey["carSmile"].In
	in.ThumbnailFile = "media/thumb.jpg"
	if _, err := f.Imports.ImportVideos(f.Ctx, []imports.VideoInput{in}, f.Src, nil); err != nil {
		t.Fatal(err)
	}
	catalogtest.MediaPassed(t, f.Pool)
	body, first := read(bare, catalog.MediaPreview)
	if body != "\xff\xd8\xff-thumbnail" {
		t.Fatalf("preview fallback: %q", body)
	}
	if _, err := f.Imports.ImportVideos(f.Ctx, []imports.VideoInput{in}, f.Src, nil); err != nil {
		t.Fatal(err)
	}
	catalogtest.MediaPassed(t, f.Pool)
	if _, again := read(bare, catalog.MediaPreview); again.ETag == first.ETag {
		t.Fatal("ETag unchanged by a re-import")
	}
}

func ptr[T any](v T) *T { return &v }
