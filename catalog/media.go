package catalog

import (
	"context"
	"io"
)

// MediaStore keeps clip files (full quality, preview, thumbnail) by key.
type MediaStore interface {
	// Put stores r under key and returns its size.
	Put(ctx context.Context, key string, r io.Reader) (int64, error)
	// Open returns the file under key for reading and seeking, with its size.
	Open(ctx context.Context, key string) (MediaFile, error)
}

// MediaFile is an open stored file.
type MediaFile interface {
	io.ReadSeekCloser
	Size() int64
}
