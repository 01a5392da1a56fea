package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"broll/catalog/media"
	"broll/internal/testkit"
)

// `media migrate --to s3` copies the local store key for key, and a second
// run (a resumed one) copies nothing again.
func TestMediaMigrateToS3(t *testing.T) {
	t.Parallel()
	c := newCtl(t)
	srv := testkit.StartS3(t)
	for k, v := range map[string]string{"BROLL_S3_ENDPOINT": srv.Endpoint, "BROLL_S3_BUCKET": srv.Bucket,
		"BROLL_S3_ACCESS_KEY": srv.AccessKey, "BROLL_S3_SECRET_KEY": srv.SecretKey} {
		c.env[k] = v
	}
	files := map[string][]byte{
		"clips/a/full.mp4":      bytes.Repeat([]byte("a"), 300_000),
		"clips/a/thumbnail.jpg": []byte("jpeg"),
		"clips/b/full.avi":      []byte("avi bytes"),
	}
	for k, v := range files {
		p := filepath.Join(c.env["BROLL_MEDIA_DIR"], filepath.FromSlash(k))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, v, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c.mustFail(t, "--to must be s3", "media", "migrate", "--to", "local")
	code, out, stderr := c.run(t, "", "media", "migrate", "--to", "s3")
	if code != 0 || out["copied"] != 3.0 || out["skipped"] != 0.0 {
		t.Fatalf("migrate: %d %v %s", code, out, stderr)
	}
	code, out, _ = c.run(t, "", "media", "migrate", "--to", "s3")
	if code != 0 || out["copied"] != 0.0 || out["skipped"] != 3.0 {
		t.Fatalf("second migrate: %d %v", code, out)
	}
	dst, err := media.NewS3(context.Background(), media.S3Options{Endpoint: srv.Endpoint, Bucket: srv.Bucket,
		Region: srv.Region, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey, PathStyle: true, PresignTTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range files {
		f, err := dst.Open(context.Background(), k)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(f)
		f.Close()
		if err != nil || !bytes.Equal(got, v) {
			t.Fatalf("%s: %d bytes in the bucket, want %d (%v)", k, len(got), len(v), err)
		}
	}
}
