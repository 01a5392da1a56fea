package api

import (
	"context"
	"testing"

	"github.com/google/uuid"
)

func TestPublicMediaOverHTTP(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	ids := seedCatalog(t, e)
	id := ids["Woman laughing in a car"].String()

	r := e.open(t, 0, "/media/previews/"+id, nil)
	if r.status != 200 || string(r.raw) != "GIF89a-preview" || r.header.Get("Content-Type") != "image/gif" ||
		r.header.Get("Content-Length") != "14" || r.header.Get("Cache-Control") != "public, max-age=3600" {
		t.Fatalf("preview: %d %q %v", r.status, r.raw, r.header)
	}
	etag := r.header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	if r := e.open(t, 0, "/media/previews/"+id, map[string]string{"If-None-Match": etag}); r.status != 304 || len(r.raw) != 0 {
		t.Fatalf("revalidation: %d %q", r.status, r.raw)
	}
	if r := e.open(t, 0, "/media/thumbnails/"+id, nil); r.status != 200 || string(r.raw) != "\xff\xd8\xff-thumb" || r.header.Get("Content-Type") != "image/jpeg" {
		t.Fatalf("thumbnail: %d %q", r.status, r.raw)
	}
	if r := e.sendUnchecked(t, 0, "HEAD", "/media/thumbnails/"+id, nil, nil); r.status != 200 || len(r.raw) != 0 {
		t.Fatalf("HEAD: %d %q", r.status, r.raw)
	}

	for path, want := range map[string]int{
		"/media/previews/" + uuid.NewString():                                   404,
		"/media/thumbnails/" + ids["Angry man shouting on the street"].String(): 404, // imported without one
		"/media/previews/not-a-uuid":                                            400,
		"/media/full/" + id:                                                     404, // no such route
	} {
		if r := e.open(t, 0, path, nil); r.status != want || r.header.Get("Content-Type") != "application/problem+json" {
			t.Errorf("%s: %d %s", path, r.status, r.raw)
		}
	}

	// A retired clip's preview is gone too.
	if _, err := e.ctl.Catalog.Retire(context.Background(), uuid.MustParse(id)); err != nil {
		t.Fatal(err)
	}
	if r := e.open(t, 0, "/media/previews/"+id, nil); r.status != 404 {
		t.Fatalf("retired preview: %d", r.status)
	}
}
