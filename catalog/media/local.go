package media

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"broll/internal/apperr"
)

// Local is a Store over a directory of the local file system (or
// a shared volume mounted on every node). Keys are slash-separated paths
// relative to the directory, such as "clips/<uuid>/full.avi".
type Local struct {
	dir string
}

// NewLocal returns a store rooted at dir, creating it if needed.
func NewLocal(dir string) (*Local, error) {
	if dir == "" {
		return nil, errors.New("media: directory is empty")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("media: %w", err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("media: %w", err)
	}
	return &Local{dir: abs}, nil
}

// Dir is the directory the store writes to.
func (m *Local) Dir() string { return m.dir }

// path maps a key to a file inside the root. Keys may come from the outside
// (a download link names one), so anything that could climb out of the
// root is refused rather than cleaned.
func (m *Local) path(key string) (string, error) {
	if !fs.ValidPath(key) || key == "." || strings.ContainsAny(key, "\\\x00") {
		return "", apperr.InvalidField("key", "media key must be a relative path without '..'")
	}
	return filepath.Join(m.dir, filepath.FromSlash(key)), nil
}

// Put stores r under key. It writes a temporary file beside the target and
// renames it into place, so a reader never sees a half-written file and a
// failed write leaves the previous version intact. There is no fsync: an
// import that dies with the machine is simply run again.
func (m *Local) Put(ctx context.Context, key string, r io.Reader) (int64, error) {
	dst, err := m.path(key)
	if err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	dir := filepath.Dir(dst)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, fmt.Errorf("media put: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".put-*")
	if err != nil {
		return 0, fmt.Errorf("media put: %w", err)
	}
	n, err := io.Copy(tmp, r)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		// CreateTemp makes the file 0600; media is served to other processes.
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), dst)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return 0, fmt.Errorf("media put %s: %w", key, err)
	}
	return n, nil
}

// Open returns the file stored under key; a missing key is not_found.
func (m *Local) Open(ctx context.Context, key string) (File, error) {
	p, err := m.path(key)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, apperr.NotFoundf("media file not found")
	}
	if err != nil {
		return nil, fmt.Errorf("media open: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("media open: %w", err)
	}
	if !st.Mode().IsRegular() {
		_ = f.Close()
		return nil, apperr.NotFoundf("media file not found")
	}
	return &localFile{File: f, size: st.Size()}, nil
}

type localFile struct {
	*os.File
	size int64
}

func (f *localFile) Size() int64 { return f.size }

// ContentType names the media type of a stored file from its extension, for
// the Content-Type of downloads and for the media_content_type column.
func ContentType(key string) string {
	return cmp.Or(map[string]string{
		".avi": "video/x-msvideo", ".mp4": "video/mp4", ".webm": "video/webm",
		".gif": "image/gif", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".png": "image/png",
	}[strings.ToLower(path.Ext(key))], "application/octet-stream")
}

// Stat returns the size of the file under key; a missing key is not_found.
func (m *Local) Stat(ctx context.Context, key string) (int64, error) {
	p, err := m.path(key)
	if err != nil {
		return 0, err
	}
	st, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && !st.Mode().IsRegular()) {
		return 0, apperr.NotFoundf("media file not found")
	}
	if err != nil {
		return 0, fmt.Errorf("media stat: %w", err)
	}
	return st.Size(), nil
}

var errSource = errors.New("media: this store cannot name its files for other programs")

// Rename moves the file under from to to in one step (a rename within the
// store's directory), replacing what to held: an upload's bytes land under a
// staging key while they stream and take their key only once all are in.
func (m *Local) Rename(ctx context.Context, from, to string) error {
	src, err := m.path(from)
	if err != nil {
		return err
	}
	dst, err := m.path(to)
	if err != nil {
		return err
	}
	if err := os.Rename(src, dst); err != nil {
		return fmt.Errorf("media rename %s: %w", from, err)
	}
	return nil
}

// Remove deletes the file under key; a missing file is no error.
func (m *Local) Remove(ctx context.Context, key string) error {
	p, err := m.path(key)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("media remove %s: %w", key, err)
	}
	return nil
}
