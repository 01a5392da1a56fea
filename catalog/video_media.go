package catalog

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"

	"broll/catalog/media"
	"broll/internal/apperr"
	"broll/internal/database"
)

// PublicMedia is an open preview or thumbnail, ready to be served.
type PublicMedia struct {
	File        media.File
	ContentType string
	// ETag changes whenever the clip is re-imported (its files may have
	// been replaced under the same key).
	ETag string
	// URL, with a store that serves its files (s3), is a presigned GET to
	// redirect to; File is then nil.
	URL string
}

// Kinds of public media.
const (
	MediaPreview   = "preview"
	MediaThumbnail = "thumbnail"
)

// OpenPublicMedia opens the preview or thumbnail of a live clip: the
// low-resolution files anyone may see before buying. The full-quality file
// is never reachable this way, only through a purchase's signed link. A
// clip imported without a preview shows its thumbnail instead. Unknown and
// retired clips, and clips without the file, are not_found. The caller
// closes File.
func (s *Service) OpenPublicMedia(ctx context.Context, id uuid.UUID, kind string) (PublicMedia, error) {
	if s.media == nil {
		return PublicMedia{}, errors.New("public media: no media store configured")
	}
	var preview, thumbnail *string
	var updated time.Time
	err := s.pool.QueryRow(ctx, sqlPublicMedia, id).Scan(&preview, &thumbnail, &updated)
	if database.NoRows(err) {
		return PublicMedia{}, apperr.NotFoundf("video %s not found", id)
	}
	if err != nil {
		return PublicMedia{}, fmt.Errorf("public media: %w", err)
	}
	key := thumbnail
	if kind == MediaPreview && preview != nil {
		key = preview
	}
	if key == nil {
		return PublicMedia{}, apperr.NotFoundf("video %s has no %s", id, kind)
	}
	if l, ok := s.media.(media.Linker); ok {
		u, err := l.GetURL(ctx, *key, media.ContentType(*key), "")
		if err != nil {
			return PublicMedia{}, err
		}
		return PublicMedia{URL: u, ContentType: media.ContentType(*key)}, nil
	}
	f, err := s.media.Open(ctx, *key)
	if err != nil {
		return PublicMedia{}, err
	}
	etag := `"` + strconv.FormatInt(updated.UnixMicro(), 36) + "-" + strconv.FormatInt(f.Size(), 36) + `"`
	return PublicMedia{File: f, ContentType: media.ContentType(*key), ETag: etag}, nil
}
