package api

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"broll/clients/go/brollclient"
	"broll/internal/config"
	"broll/tenancy"
)

// uploadKit is an env with an ops key and helpers to upload through it.
type uploadKit struct {
	*testEnv
	s3  bool
	ops tenancy.IssuedKey
}

func newUploadKit(t *testing.T, s3 bool, configure func(*config.Config)) *uploadKit {
	t.Helper()
	e := setup(t, envOpts{s3: s3, perMinute: 10_000, configure: configure})
	ops, err := e.ctl.Tenancy.CreateOpsKey(context.Background(), "content team")
	if err != nil {
		t.Fatal(err)
	}
	return &uploadKit{testEnv: e, s3: s3, ops: ops}
}

// newUpload asks key for an upload of a .webm file of size bytes.
func (k *uploadKit) newUpload(t *testing.T, key string, size int) brollclient.Upload {
	t.Helper()
	return expect[brollclient.Upload](t, k.do(t, 0, "POST", uploadsPath, key,
		map[string]any{"filename": "clip.webm", "content_type": "video/webm", "size": size}), 201)
}

// put sends data to the upload as its URL says: the presigned PUT of the
// store (s3), or the API's own with key (local). It returns the status and
// the problem code, if any.
func (k *uploadKit) put(t *testing.T, up brollclient.Upload, key string, data []byte) (int, string) {
	t.Helper()
	if k.s3 {
		req, _ := http.NewRequest(http.MethodPut, up.Url, bytes.NewReader(data))
		for h, v := range up.Headers {
			req.Header.Set(h, v)
		}
		req.ContentLength = int64(len(data))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, ""
	}
	u, _ := url.Parse(up.Url)
	req := httptest.NewRequest(http.MethodPut, u.RequestURI(), bytes.NewReader(data))
	req.Header.Set("Content-Type", "video/webm")
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := k.nodes[0].app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	r := response{status: res.StatusCode, header: res.Header, raw: raw}
	if r.status >= 400 {
		return r.status, string(problemOf(t, r).Code)
	}
	return r.status, ""
}

// importUpload posts one clip naming the upload through key.
func (k *uploadKit) importUpload(t *testing.T, key, uploadID string) response {
	t.Helper()
	clip := map[string]any{"title": "Waves on a beach", "emotion": "neutral", "gender": "female", "difficulty": "easy", "upload_id": uploadID}
	return k.do(t, 0, "POST", "/api/ops/v1/videos", key, []any{clip})
}

// clipsOf counts the clips whose file is the upload's.
func (k *uploadKit) clipsOf(t *testing.T, uploadID string) int {
	t.Helper()
	var n int
	if err := k.pool.QueryRow(context.Background(), `SELECT count(*) FROM videos WHERE media_key LIKE 'uploads/' || $1 || '/%'`, uploadID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func storeName(s3 bool) string {
	if s3 {
		return "s3"
	}
	return "local"
}

// An upload is its key's: another ops key can neither write it (404, as if
// it did not exist) nor import it.
func TestUploadBelongsToItsKey(t *testing.T) {
	t.Parallel()
	k := newUploadKit(t, false, nil)
	other, err := k.ctl.Tenancy.CreateOpsKey(context.Background(), "another team")
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte{7}, 1000)
	up := k.newUpload(t, k.ops.Secret, len(data))
	if code, pc := k.put(t, up, other.Secret, data); code != http.StatusNotFound || pc != "not_found" {
		t.Fatalf("another key's put: %d %s", code, pc)
	}
	if _, err := k.media.Stat(context.Background(), "uploads/"+up.UploadId.String()+"/full.webm"); err == nil {
		t.Fatal("another key's put stored a file")
	}
	if code, _ := k.put(t, up, k.ops.Secret, data); code != http.StatusNoContent {
		t.Fatalf("owner's put: %d", code)
	}
	if r := k.importUpload(t, other.Secret, up.UploadId.String()); r.status != 400 || deref(deref(problemOf(t, r).Errors)[0].Field) != "upload_id" {
		t.Fatalf("another key's import: %d %s", r.status, r.raw)
	}
	if r := k.importUpload(t, k.ops.Secret, up.UploadId.String()); r.status != 200 {
		t.Fatalf("owner's import: %d %s", r.status, r.raw)
	}
}

// On both stores an import refuses an upload whose file is not all there
// (409 upload_incomplete, nothing written), takes it once it is, and 50
// imports at once naming one upload make exactly one clip; the others are
// 409 upload_claimed. No byte is taken after that: the API's PUT answers
// 409 upload_closed, the store refuses the presigned PUT (412).
func TestUploadCompleteThenClaimedOnce(t *testing.T) {
	t.Parallel()
	for _, s3 := range []bool{false, true} {
		t.Run(storeName(s3), func(t *testing.T) {
			t.Parallel()
			k := newUploadKit(t, s3, nil)
			data := bytes.Repeat([]byte{1}, 4096)
			up := k.newUpload(t, k.ops.Secret, len(data))

			r := k.importUpload(t, k.ops.Secret, up.UploadId.String())
			if p := problemOf(t, r); r.status != 409 || p.Code != "upload_incomplete" || len(deref(p.Errors)) != 1 || deref(deref(p.Errors)[0].Field) != "upload_id" {
				t.Fatalf("import before the put: %d %s", r.status, r.raw)
			}
			if code, _ := k.put(t, up, k.ops.Secret, data[:len(data)-1]); code < 400 || code >= 500 {
				t.Fatalf("a short body was taken: %d", code)
			}
			if r := k.importUpload(t, k.ops.Secret, up.UploadId.String()); r.status != 409 || problemOf(t, r).Code != "upload_incomplete" {
				t.Fatalf("import after a short put: %d %s", r.status, r.raw)
			}
			if code, _ := k.put(t, up, k.ops.Secret, data); code >= 300 {
				t.Fatalf("put: %d", code)
			}

			const n = 50
			statuses := make([]int, n)
			codes := make([]string, n)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range n {
				wg.Go(func() {
					<-start
					r := k.importUpload(t, k.ops.Secret, up.UploadId.String())
					statuses[i] = r.status
					if r.status >= 400 {
						codes[i] = string(problemOf(t, r).Code)
					}
				})
			}
			close(start)
			wg.Wait()
			ok := 0
			for i := range n {
				switch {
				case statuses[i] == 200:
					ok++
				case statuses[i] != 409 || codes[i] != "upload_claimed":
					t.Errorf("import %d: %d %s", i, statuses[i], codes[i])
				}
			}
			if ok != 1 || k.clipsOf(t, up.UploadId.String()) != 1 {
				t.Fatalf("%d imports succeeded, %d clips made of one upload", ok, k.clipsOf(t, up.UploadId.String()))
			}

			again := bytes.Repeat([]byte{2}, len(data))
			code, pc := k.put(t, up, k.ops.Secret, again)
			if (!s3 && (code != 409 || pc != "upload_closed")) || (s3 && code != http.StatusPreconditionFailed) {
				t.Fatalf("a put after the claim: %d %s", code, pc)
			}
			f, err := k.media.Open(context.Background(), "uploads/"+up.UploadId.String()+"/full.webm")
			if err != nil {
				t.Fatal(err)
			}
			stored, _ := io.ReadAll(f)
			f.Close()
			if !bytes.Equal(stored, data) {
				t.Fatal("the claimed file was replaced")
			}
		})
	}
}

// A PUT still streaming while the upload is imported cannot replace the
// file afterwards: while it streams the upload is incomplete (the import
// is refused); once another PUT completed and an import claimed it, the
// streaming PUT's end is refused (409) and the clip keeps the file it took.
func TestUploadPutStreamingDuringImport(t *testing.T) {
	t.Parallel()
	k := newUploadKit(t, false, nil)
	size := 64 << 10
	first, late := bytes.Repeat([]byte{'a'}, size), bytes.Repeat([]byte{'z'}, size)
	up := k.newUpload(t, k.ops.Secret, size)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = k.nodes[0].app.Listener(ln) }()
	t.Cleanup(func() { _ = k.nodes[0].app.Shutdown() })
	pr, pw := io.Pipe()
	u, _ := url.Parse(up.Url)
	req, _ := http.NewRequest(http.MethodPut, "http://"+ln.Addr().String()+u.RequestURI(), pr)
	req.ContentLength = int64(size)
	req.Header.Set("Content-Type", "video/webm")
	req.Header.Set("Authorization", "Bearer "+k.ops.Secret)
	type result struct {
		status int
		raw    []byte
		err    error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- result{err: err}
			return
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		done <- result{status: resp.StatusCode, raw: raw}
	}()
	if _, err := pw.Write(late[:size/2]); err != nil {
		t.Fatal(err)
	}
	// The server is writing the streaming body once a file appears under
	// the upload's folder.
	dir := filepath.Join(k.cfg.MediaDir, "uploads", up.UploadId.String())
	for deadline := time.Now().Add(10 * time.Second); ; {
		if ents, _ := os.ReadDir(dir); len(ents) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the streaming put never reached the store")
		}
		time.Sleep(10 * time.Millisecond)
	}

	if r := k.importUpload(t, k.ops.Secret, up.UploadId.String()); r.status != 409 || problemOf(t, r).Code != "upload_incomplete" {
		t.Fatalf("import while the put streams: %d %s", r.status, r.raw)
	}
	if code, _ := k.put(t, up, k.ops.Secret, first); code != http.StatusNoContent {
		t.Fatalf("a whole put: %d", code)
	}
	if r := k.importUpload(t, k.ops.Secret, up.UploadId.String()); r.status != 200 {
		t.Fatalf("import: %d %s", r.status, r.raw)
	}
	if _, err := pw.Write(late[size/2:]); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	if res.status != 409 || !bytes.Contains(res.raw, []byte(`"code":"upload_closed"`)) {
		t.Fatalf("the streaming put's end: %d %s", res.status, res.raw)
	}
	if code, pc := k.put(t, up, k.ops.Secret, late); code != 409 || pc != "upload_closed" {
		t.Fatalf("a put after the claim: %d %s", code, pc)
	}
	f, err := k.media.Open(context.Background(), "uploads/"+up.UploadId.String()+"/full.webm")
	if err != nil {
		t.Fatal(err)
	}
	stored, _ := io.ReadAll(f)
	f.Close()
	if !bytes.Equal(stored, first) {
		t.Fatalf("the clip's file was replaced (%q...)", stored[:8])
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("left in the upload's folder: %d files", len(ents))
	}
}

// Importing by upload_id reads no file of the node: it works, and fails
// with its own 4xx, on a node whose BROLL_IMPORT_DIR is missing; only a
// clip naming a file path is refused there (400, nothing written).
func TestUploadImportWithoutImportDir(t *testing.T) {
	t.Parallel()
	k := newUploadKit(t, false, func(c *config.Config) { c.ImportDir = filepath.Join(os.TempDir(), "broll-no-such-import-dir") })
	data := bytes.Repeat([]byte{3}, 2048)
	up := k.newUpload(t, k.ops.Secret, len(data))
	if r := k.importUpload(t, k.ops.Secret, up.UploadId.String()); r.status != 409 || problemOf(t, r).Code != "upload_incomplete" {
		t.Fatalf("import of an incomplete upload: %d %s", r.status, r.raw)
	}
	if code, _ := k.put(t, up, k.ops.Secret, data); code != http.StatusNoContent {
		t.Fatalf("put: %d", code)
	}
	withFile := map[string]any{"title": "From a file", "emotion": "neutral", "gender": "male", "difficulty": "easy", "media_file": "clip.avi"}
	if r := k.do(t, 0, "POST", "/api/ops/v1/videos", k.ops.Secret, []any{withFile}); r.status != 400 || deref(deref(problemOf(t, r).Errors)[0].Field) != "media_file" {
		t.Fatalf("a file path without an import directory: %d %s", r.status, r.raw)
	}
	if r := k.importUpload(t, k.ops.Secret, up.UploadId.String()); r.status != 200 || k.clipsOf(t, up.UploadId.String()) != 1 {
		t.Fatalf("import: %d %s", r.status, r.raw)
	}
}
