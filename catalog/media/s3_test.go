package media

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"broll/internal/apperr"
	"broll/internal/testkit"
)

func newTestS3(t *testing.T, ttl time.Duration) *S3 {
	t.Helper()
	srv := testkit.StartS3(t)
	m, err := NewS3(context.Background(), S3Options{
		Endpoint: srv.Endpoint, Bucket: srv.Bucket, Region: srv.Region,
		AccessKey: srv.AccessKey, SecretKey: srv.SecretKey, PathStyle: true, PresignTTL: ttl,
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Both stores keep and return the same bytes, seek the same way and call a
// missing key not_found.
func TestMediaStoresAgree(t *testing.T) {
	t.Parallel()
	local, err := NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	stores := map[string]Store{"local": local, "s3": newTestS3(t, time.Minute)}
	for name, m := range stores {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			key := "clips/0b9f3a4e-8c51-4f8e-9d2a-6a3c1e7b5d10/full.mp4"
			data := bytes.Repeat([]byte("0123456789"), 100_000)
			if n, err := m.Put(ctx, key, bytes.NewReader(data)); err != nil || n != int64(len(data)) {
				t.Fatalf("put = %d, %v", n, err)
			}
			if n, err := m.Stat(ctx, key); err != nil || n != int64(len(data)) {
				t.Fatalf("stat = %d, %v", n, err)
			}
			f, err := m.Open(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			if f.Size() != int64(len(data)) {
				t.Fatalf("size = %d", f.Size())
			}
			if _, err := f.Seek(999_990, io.SeekStart); err != nil {
				t.Fatal(err)
			}
			rest, err := io.ReadAll(f)
			f.Close()
			if err != nil || string(rest) != "0123456789" {
				t.Fatalf("read after seek = %q, %v", rest, err)
			}
			if _, err := m.Open(ctx, "clips/none/full.mp4"); apperr.CodeOf(err) != apperr.NotFound {
				t.Fatalf("open missing = %v", err)
			}
			if _, err := m.Stat(ctx, "clips/none/full.mp4"); apperr.CodeOf(err) != apperr.NotFound {
				t.Fatalf("stat missing = %v", err)
			}
			src, err := Source(ctx, m, key)
			if err != nil || src == "" {
				t.Fatalf("source = %q, %v", src, err)
			}
		})
	}
}

// A presigned GET serves the exact bytes with the asked type and name; a
// presigned PUT takes only the size and type it was signed for.
func TestS3PresignedURLs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := newTestS3(t, time.Minute)
	body := []byte(strings.Repeat("video bytes ", 1000))
	put, headers, err := m.PutURL(ctx, "uploads/u1/full.mp4", "video/mp4", int64(len(body)), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	send := func(data []byte, ctype string) int {
		req, _ := http.NewRequest(http.MethodPut, put, bytes.NewReader(data))
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		req.Header.Set("Content-Type", ctype)
		req.ContentLength = int64(len(data))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := send(append(body, 'x'), "video/mp4"); code < 400 {
		t.Fatalf("a larger body than signed was taken: %d", code)
	}
	if code := send(body, "text/html"); code < 400 {
		t.Fatalf("another content type than signed was taken: %d", code)
	}
	if code := send(body, "video/mp4"); code != http.StatusOK {
		t.Fatalf("signed put = %d", code)
	}
	// The PUT is conditional: once the object is there, the same URL
	// cannot replace it.
	if code := send(body, "video/mp4"); code != http.StatusPreconditionFailed {
		t.Fatalf("a second put over a stored upload = %d, want 412", code)
	}

	get, err := m.GetURL(ctx, "uploads/u1/full.mp4", "video/mp4", "clip.mp4")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(get)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !bytes.Equal(got, body) {
		t.Fatalf("presigned get = %d, %d bytes", resp.StatusCode, len(got))
	}
	if ct, cd := resp.Header.Get("Content-Type"), resp.Header.Get("Content-Disposition"); ct != "video/mp4" || !strings.Contains(cd, `filename="clip.mp4"`) {
		t.Fatalf("headers: %q %q", ct, cd)
	}
	if n := resp.Header.Get("Content-Length"); n != strconv.Itoa(len(body)) {
		t.Fatalf("content-length %q", n)
	}
}

// A presigned GET stops working when its TTL is over: the store itself
// refuses it.
func TestS3PresignedGetExpires(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := newTestS3(t, time.Second)
	if _, err := m.Put(ctx, "clips/x/full.mp4", strings.NewReader("abc")); err != nil {
		t.Fatal(err)
	}
	u, err := m.GetURL(ctx, "clips/x/full.mp4", "", "")
	if err != nil {
		t.Fatal(err)
	}
	// The URL works (200) until its second is over, then the store refuses
	// it (403): poll for the refusal rather than sleep a guess at when.
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusForbidden {
			return
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("presigned url = %d, want 200 and then 403", resp.StatusCode)
		}
		if time.Now().After(deadline) {
			t.Fatal("a presigned url with a 1 s TTL still works after 30 s")
		}
		time.Sleep(100 * time.Millisecond) // pace the polls
	}
}

// With a public endpoint, the URLs clients get name it (the store as they
// reach it) and work there; the worker's source stays on the service's own.
func TestS3PublicEndpoint(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := testkit.StartS3(t)
	public := strings.Replace(srv.Endpoint, "127.0.0.1", "localhost", 1)
	m, err := NewS3(ctx, S3Options{Endpoint: srv.Endpoint, PublicEndpoint: public, Bucket: srv.Bucket, Region: srv.Region,
		AccessKey: srv.AccessKey, SecretKey: srv.SecretKey, PathStyle: true, PresignTTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Put(ctx, "clips/p/full.mp4", strings.NewReader("public")); err != nil {
		t.Fatal(err)
	}
	u, err := m.GetURL(ctx, "clips/p/full.mp4", "video/mp4", "")
	if err != nil || !strings.HasPrefix(u, public+"/") {
		t.Fatalf("get url %q: %v", u, err)
	}
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "public" {
		t.Fatalf("public get = %d %q", resp.StatusCode, body)
	}
	if src, err := Source(ctx, m, "clips/p/full.mp4"); err != nil || !strings.HasPrefix(src, srv.Endpoint+"/") {
		t.Fatalf("source %q: %v", src, err)
	}
}
