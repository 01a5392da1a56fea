package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/uuid"

	"broll/billing/billingtest"
	"broll/catalog/media"
	"broll/clients/go/brollclient"
	"broll/internal/testkit"
)

// ffprobeJSON reads a file's first video stream and format.
func ffprobeJSON(t *testing.T, data []byte) (width, height int, format string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "probe")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("ffprobe", "-v", "error", "-print_format", "json", "-show_streams", "-show_format", "-select_streams", "v:0", p).Output()
	if err != nil {
		t.Fatalf("ffprobe cannot read the file: %v", err)
	}
	var doc struct {
		Streams []struct{ Width, Height int } `json:"streams"`
		Format  struct {
			FormatName string `json:"format_name"`
		} `json:"format"`
	}
	if err := json.Unmarshal(out, &doc); err != nil || len(doc.Streams) == 0 {
		t.Fatalf("ffprobe: %v %s", err, out)
	}
	return doc.Streams[0].Width, doc.Streams[0].Height, doc.Format.FormatName
}

// fetchMedia follows what a node answered for link: the body itself (local
// store) or, for a 302, the presigned URL the store serves (s3). It says
// whether the bytes came from the store rather than the API.
func (e *testEnv) fetchMedia(t *testing.T, link string) (status int, body []byte, fromStore bool) {
	t.Helper()
	r := e.open(t, 0, link, nil)
	if r.status != http.StatusFound {
		return r.status, r.raw, false
	}
	loc := r.header.Get("Location")
	if e.s3 == nil || len(loc) < len(e.s3.Endpoint) || loc[:len(e.s3.Endpoint)] != e.s3.Endpoint {
		t.Fatalf("redirect to %q, not to the store", loc)
	}
	resp, err := http.Get(loc)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ = io.ReadAll(resp.Body)
	return resp.StatusCode, body, true
}

// TestMediaStoreSuite runs one clip's life on both stores: upload, import
// by upload_id, probe and preview, purchase, download (302 to the store for
// s3, the bytes for local), logged once.
func TestMediaStoreSuite(t *testing.T) {
	t.Parallel()
	// 225 frames at 30 fps: exactly 7.5 s.
	video, err := os.ReadFile(testkit.RenderVideo(t, 1080, 1920, 7.5))
	if err != nil {
		t.Fatal(err)
	}
	for _, store := range []string{"local", "s3"} {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			e := setup(t, envOpts{s3: store == "s3"})
			ctx := context.Background()
			ops, err := e.ctl.Tenancy.CreateOpsKey(ctx, "content team")
			if err != nil {
				t.Fatal(err)
			}

			// Bad upload requests are 400s naming the field.
			for field, body := range map[string]map[string]any{
				"filename":     {"filename": "../x.mp4", "content_type": "video/mp4", "size": 10},
				"content_type": {"filename": "x.mp4", "content_type": "text/html", "size": 10},
				"size":         {"filename": "x.mp4", "content_type": "video/mp4", "size": e.cfg.UploadMaxBytes + 1},
			} {
				if r := e.do(t, 0, "POST", uploadsPath, ops.Secret, body); r.status != 400 || deref(problemOf(t, r).Field) != field {
					t.Fatalf("bad %s: %d %s", field, r.status, r.raw)
				}
			}

			up := expect[brollclient.Upload](t, e.do(t, 0, "POST", uploadsPath, ops.Secret, map[string]any{"filename": "clip.mp4", "content_type": "video/mp4", "size": len(video)}), 201)
			if up.Method != "PUT" {
				t.Fatalf("upload: %+v", up)
			}
			uploadID, headers := up.UploadId.String(), up.Headers
			put := func(data []byte) int {
				if store == "s3" {
					req, _ := http.NewRequest(http.MethodPut, up.Url, bytes.NewReader(data))
					for k, v := range headers {
						req.Header.Set(k, v)
					}
					req.ContentLength = int64(len(data))
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
					return resp.StatusCode
				}
				u, _ := url.Parse(up.Url)
				req := httptest.NewRequest(http.MethodPut, u.RequestURI(), bytes.NewReader(data))
				req.Header.Set("Content-Type", headers["Content-Type"])
				req.Header.Set("Authorization", "Bearer "+ops.Secret)
				res, err := e.nodes[0].app.Test(req, -1)
				if err != nil {
					t.Fatal(err)
				}
				res.Body.Close()
				return res.StatusCode
			}
			if code := put(video[:len(video)-1]); code < 400 || code >= 500 {
				t.Fatalf("a short body was taken: %d", code)
			}
			if code := put(video); code >= 300 {
				t.Fatalf("put: %d", code)
			}

			// Import by upload_id, with no figures typed in.
			clip := map[string]any{"title": "Tall test pattern", "emotion": "neutral", "gender": "female", "difficulty": "easy", "upload_id": uploadID}
			if r := e.do(t, 0, "POST", "/api/ops/v1/videos", ops.Secret, []any{clip}); r.status != 200 {
				t.Fatalf("import: %d %s", r.status, r.raw)
			}
			var id uuid.UUID
			if err := e.pool.QueryRow(ctx, `SELECT video_id FROM media_uploads WHERE id = $1`, uploadID).Scan(&id); err != nil {
				t.Fatal(err)
			}
			// One upload makes one clip.
			if r := e.do(t, 0, "POST", "/api/ops/v1/videos", ops.Secret, []any{clip}); r.status != 409 || problemOf(t, r).Code != "upload_claimed" {
				t.Fatalf("second import of one upload: %d %s", r.status, r.raw)
			}

			// What the worker does for a media task.
			if err := e.ctl.MediaJobs.ProcessMedia(ctx, id); err != nil {
				t.Fatal(err)
			}
			acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 10_000})
			buyer := acct.CustomerKey(t, e.pool, "buyer")
			d := expect[brollclient.Video](t, e.do(t, 0, "GET", "/api/v1/broll/"+id.String(), buyer.Secret, nil), 200)
			if d.DurationSeconds == nil || *d.DurationSeconds != 7.5 || d.Width == nil || *d.Width != 1080 || d.Height == nil || *d.Height != 1920 ||
				d.Orientation == nil || *d.Orientation != "vertical" || d.Fps == nil || *d.Fps != 30 || d.MediaType != "video" {
				t.Fatalf("figures not filled from the file: %+v", d)
			}

			status, preview, fromStore := e.fetchMedia(t, "http://api.test/media/previews/"+id.String())
			if status != 200 || fromStore != (store == "s3") {
				t.Fatalf("preview: %d from store %v", status, fromStore)
			}
			if w, h, format := ffprobeJSON(t, preview); max(w, h) > media.PreviewLongSide || h != media.PreviewLongSide || format == "" {
				t.Fatalf("preview %dx%d %s", w, h, format)
			}
			if status, thumb, _ := e.fetchMedia(t, "http://api.test/media/thumbnails/"+id.String()); status != 200 || !bytes.HasPrefix(thumb, []byte{0xff, 0xd8}) {
				t.Fatalf("thumbnail: %d, %d bytes", status, len(thumb))
			}

			link := downloadLink(e.buy(t, 0, buyer.Secret, id).Purchases, 0)
			status, got, fromStore := e.fetchMedia(t, link)
			if status != 200 || !bytes.Equal(got, video) || fromStore != (store == "s3") {
				t.Fatalf("download: %d, %d bytes (want %d), from store %v", status, len(got), len(video), fromStore)
			}
			if log := e.downloadLog(t, link); len(log) != 1 || log[0].sent != int64(len(video)) {
				t.Fatalf("download log = %+v", log)
			}
			// A tampered link is refused before the store is asked.
			if r := e.open(t, 0, link+"0", nil); r.status != 403 && r.status != 400 {
				t.Fatalf("tampered link: %d", r.status)
			}
		})
	}
}
