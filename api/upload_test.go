package api

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"broll/clients/go/brollclient"
)

// A local upload larger than BROLL_MAX_BODY_BYTES streams to the store;
// other routes keep the body limit; a body longer than the upload's size
// is refused and leaves nothing behind.
func TestLocalUploadStreamsPastBodyLimit(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	ctx := context.Background()
	ops, err := e.ctl.Tenancy.CreateOpsKey(ctx, "content team")
	if err != nil {
		t.Fatal(err)
	}
	size := 3*e.cfg.MaxBodyBytes + 17
	data := bytes.Repeat([]byte{0x42}, size)
	put := func(rawURL string, body []byte, ctype string) int {
		u, _ := url.Parse(rawURL)
		req := httptest.NewRequest(http.MethodPut, u.RequestURI(), bytes.NewReader(body))
		req.Header.Set("Content-Type", ctype)
		req.Header.Set("Authorization", "Bearer "+ops.Secret)
		res, err := e.nodes[0].app.Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	newUpload := func() (id, u string) {
		up := expect[brollclient.Upload](t, e.do(t, 0, "POST", uploadsPath, ops.Secret, map[string]any{"filename": "big.webm", "content_type": "video/webm", "size": size}), 201)
		return up.UploadId.String(), up.Url
	}

	id, u := newUpload()
	if code := put(u, data, "video/mp4"); code != http.StatusUnsupportedMediaType {
		t.Fatalf("another content type: %d", code)
	}
	if code := put(u, append(data, 1), "video/webm"); code != http.StatusBadRequest {
		t.Fatalf("a longer body: %d", code)
	}
	if _, err := e.media.Stat(ctx, "uploads/"+id+"/full.webm"); err == nil {
		t.Fatal("a refused body left a file")
	}
	if code := put(u, data, "video/webm"); code != http.StatusNoContent {
		t.Fatalf("upload put: %d", code)
	}
	if n, err := e.media.Stat(ctx, "uploads/"+id+"/full.webm"); err != nil || n != int64(size) {
		t.Fatalf("stored %d bytes, %v", n, err)
	}
	// Any other route still refuses a body over the limit.
	if r := e.do(t, 0, "POST", "/api/ops/v1/videos", ops.Secret, string(data)); r.status != http.StatusRequestEntityTooLarge {
		t.Fatalf("big body elsewhere: %d", r.status)
	}
	// Without the ops key, nothing is taken.
	_, u2 := newUpload()
	pu, _ := url.Parse(u2)
	req := httptest.NewRequest(http.MethodPut, pu.RequestURI(), bytes.NewReader(data))
	req.Header.Set("Content-Type", "video/webm")
	if res, err := e.nodes[0].app.Test(req, -1); err != nil || res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("anonymous put: %v %v", res.StatusCode, err)
	}
}
