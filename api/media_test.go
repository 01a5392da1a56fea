package api

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/uuid"

	"broll/catalog"
)

// fetch sends a request without a bearer key through node 0.
func (e *testEnv) fetch(t *testing.T, method, path string, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := e.nodes[0].app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res, body
}

func TestPublicMediaOverHTTP(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	ids := seedCatalog(t, e)
	id := ids["Woman laughing in a car"].String()

	res, body := e.fetch(t, "GET", "/media/previews/"+id, nil)
	if res.StatusCode != 200 || string(body) != "GIF89a-preview" || res.Header.Get("Content-Type") != "image/gif" ||
		res.Header.Get("Content-Length") != "14" || res.Header.Get("Cache-Control") != "public, max-age=3600" {
		t.Fatalf("preview: %d %q %v", res.StatusCode, body, res.Header)
	}
	etag := res.Header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	res, body = e.fetch(t, "GET", "/media/previews/"+id, map[string]string{"If-None-Match": etag})
	if res.StatusCode != 304 || len(body) != 0 {
		t.Fatalf("revalidation: %d %q", res.StatusCode, body)
	}
	res, body = e.fetch(t, "GET", "/media/thumbnails/"+id, nil)
	if res.StatusCode != 200 || string(body) != "\xff\xd8\xff-thumb" || res.Header.Get("Content-Type") != "image/jpeg" {
		t.Fatalf("thumbnail: %d %q", res.StatusCode, body)
	}
	res, body = e.fetch(t, "HEAD", "/media/thumbnails/"+id, nil)
	if res.StatusCode != 200 || len(body) != 0 {
		t.Fatalf("HEAD: %d %q", res.StatusCode, body)
	}

	for path, want := range map[string]int{
		"/media/previews/" + uuid.NewString():                                   404,
		"/media/thumbnails/" + ids["Angry man shouting on the street"].String(): 404, // imported without one
		"/media/previews/not-a-uuid":                                            400,
		"/media/full/" + id:                                                     404, // no such route
	} {
		res, body := e.fetch(t, "GET", path, nil)
		if res.StatusCode != want || res.Header.Get("Content-Type") != "application/problem+json" {
			t.Errorf("%s: %d %s", path, res.StatusCode, body)
		}
	}

	// A retired clip's preview is gone too.
	if _, err := catalog.New(e.pool, e.media, nil).Retire(context.Background(), uuid.MustParse(id)); err != nil {
		t.Fatal(err)
	}
	if res, _ := e.fetch(t, "GET", "/media/previews/"+id, nil); res.StatusCode != 404 {
		t.Fatalf("retired preview: %d", res.StatusCode)
	}
}
