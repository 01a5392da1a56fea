package media

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"broll/internal/apperr"
)

func TestLocalMediaPutOpen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "nested", "media")
	m, err := NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		t.Fatalf("dir not created: %v", err)
	}

	key := "clips/0b9f3a4e-8c51-4f8e-9d2a-6a3c1e7b5d10/full.avi"
	n, err := m.Put(ctx, key, strings.NewReader("first"))
	if err != nil || n != 5 {
		t.Fatalf("put = %d, %v", n, err)
	}
	if n, err = m.Put(ctx, key, strings.NewReader("second version")); err != nil || n != 14 {
		t.Fatalf("overwrite = %d, %v", n, err)
	}
	f, err := m.Open(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Size() != 14 {
		t.Fatalf("size = %d", f.Size())
	}
	if _, err := f.Seek(7, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(f)
	if string(rest) != "version" {
		t.Fatalf("read after seek = %q", rest)
	}

	// No temporary files are left beside the stored one.
	entries, _ := os.ReadDir(filepath.Join(dir, "clips", "0b9f3a4e-8c51-4f8e-9d2a-6a3c1e7b5d10"))
	if len(entries) != 1 {
		t.Fatalf("files in clip dir = %d, want 1", len(entries))
	}
}

func TestLocalMediaRejectsEscapingKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	root := t.TempDir()
	m, err := NewLocal(filepath.Join(root, "media"))
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"", ".", "..", "../outside", "clips/../../outside", "/etc/passwd",
		"clips//x", "clips/x/", `clips\..\x`, "clips/./x", "a\x00b"} {
		if _, err := m.Put(ctx, key, strings.NewReader("x")); apperr.CodeOf(err) != apperr.Invalid {
			t.Errorf("Put(%q) = %v, want invalid_request", key, err)
		}
		if _, err := m.Open(ctx, key); apperr.CodeOf(err) != apperr.Invalid {
			t.Errorf("Open(%q) = %v, want invalid_request", key, err)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "outside")); !os.IsNotExist(err) {
		t.Fatalf("a file escaped the media dir")
	}
}

func TestLocalMediaOpenMissing(t *testing.T) {
	t.Parallel()
	m, err := NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	_ = os.Mkdir(filepath.Join(m.Dir(), "clips"), 0o755)
	for _, key := range []string{"clips/none/full.avi", "clips"} {
		if _, err := m.Open(context.Background(), key); apperr.CodeOf(err) != apperr.NotFound {
			t.Errorf("Open(%q) = %v, want not_found", key, err)
		}
	}
}

func TestContentType(t *testing.T) {
	t.Parallel()
	for key, want := range map[string]string{
		"clips/a/full.avi":       "video/x-msvideo",
		"clips/a/full.MP4":       "video/mp4",
		"clips/a/preview.gif":    "image/gif",
		"clips/a/thumbnail.jpg":  "image/jpeg",
		"clips/a/thumbnail.jpeg": "image/jpeg",
		"clips/a/thumbnail.png":  "image/png",
		"clips/a/full.webm":      "video/webm",
		"clips/a/full.mkv":       "application/octet-stream",
		"clips/a/full":           "application/octet-stream",
	} {
		if got := ContentType(key); got != want {
			t.Errorf("ContentType(%q) = %q, want %q", key, got, want)
		}
	}
}
