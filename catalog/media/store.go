package media

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"
)

// Store keeps clip files (full quality, preview, thumbnail) by key.
type Store interface {
	// Put stores r under key and returns its size.
	Put(ctx context.Context, key string, r io.Reader) (int64, error)
	// Open returns the file under key for reading and seeking, with its size.
	Open(ctx context.Context, key string) (File, error)
	// Stat returns the size of the file under key; a missing key is
	// not_found.
	Stat(ctx context.Context, key string) (int64, error)
}

// Remover is a Store that deletes files (both stores are): copies made
// from an original (stamped licence copies) are removed when they are no
// longer kept.
type Remover interface {
	// Remove deletes the file under key; a missing file is no error.
	Remove(ctx context.Context, key string) error
}

// File is an open stored file.
type File interface {
	io.ReadSeekCloser
	Size() int64
}

// Linker is a Store that serves its files itself (S3): the API
// authorises, logs and redirects to a short-lived URL instead of streaming
// the bytes through its own nodes.
type Linker interface {
	// GetURL is a presigned GET of key that answers with contentType and,
	// when attachment is not empty, as a download named attachment.
	GetURL(ctx context.Context, key, contentType, attachment string) (string, error)
	// PutURL is a presigned PUT of key valid for ttl that only accepts a
	// body of exactly size bytes sent with contentType; headers are those
	// the client must send as they are.
	PutURL(ctx context.Context, key, contentType string, size int64, ttl time.Duration) (url string, headers map[string]string, err error)
}

// Source names a stored file for a program that reads it by name
// (ffprobe, ffmpeg): a path for the local store, a presigned URL for s3.
func Source(ctx context.Context, m Store, key string) (string, error) {
	if s3, ok := m.(*S3); ok {
		return s3.internalURL(ctx, key)
	}
	if l, ok := m.(*Local); ok {
		return l.path(key)
	}
	return "", errSource
}

// PutFile stores the file at path under key in st and returns its size.
func PutFile(ctx context.Context, st Store, key, path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	n, err := st.Put(ctx, key, f)
	if err != nil {
		return 0, fmt.Errorf("store %s: %w", path, err)
	}
	return n, nil
}
