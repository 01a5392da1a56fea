package mediajobs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"broll/catalog/media"
	"broll/internal/database"
)

// MakePreviews makes the preview and thumbnail a clip on sale still lacks
// (a previews job, recorded by StoreProbed): ffmpeg's work, kept apart
// from the probe so that it never holds a clip back from sale. A clip
// gone, not ready or with both files is done; errors are worth a retry.
func (s *Service) MakePreviews(ctx context.Context, id uuid.UUID) error {
	if s.media == nil {
		return errors.New("previews: no media store configured")
	}
	var key, mediaType string
	var duration float64
	var needPreview, needThumb bool
	err := s.pool.QueryRow(ctx, sqlPreviewJob, id).Scan(&key, &mediaType, &duration, &needPreview, &needThumb)
	if database.NoRows(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("previews: %w", err)
	}
	needPreview = needPreview && mediaType == "video"
	if !needPreview && !needThumb {
		return nil
	}
	src, err := media.Source(ctx, s.media, key)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "broll-previews-*")
	if err != nil {
		return fmt.Errorf("previews: %w", err)
	}
	defer os.RemoveAll(tmp)
	prefix := "clips/" + id.String() + "/"
	var preview, thumb *string
	if needPreview {
		k, err := s.makeMedia(ctx, filepath.Join(tmp, "preview.mp4"), prefix+"preview.mp4", func(dst string) error {
			return media.MakePreview(ctx, src, dst)
		})
		if err != nil {
			return err
		}
		preview = &k
	}
	if needThumb {
		k, err := s.makeMedia(ctx, filepath.Join(tmp, "thumbnail.jpg"), prefix+"thumbnail.jpg", func(dst string) error {
			return media.MakeThumbnail(ctx, src, dst, min(1, duration/2))
		})
		if err != nil {
			return err
		}
		thumb = &k
	}
	// A clip's details show its preview and thumbnail: the write holds the
	// catalog like every write of a clip row (catalog/change.go).
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, sqlPreviewsDone, id, preview, thumb, key)
		return err
	})
	if err != nil {
		return fmt.Errorf("previews: %w", err)
	}
	return nil
}
