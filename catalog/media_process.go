package catalog

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// ErrVideoGone is a video deleted before its media job ran.
var ErrVideoGone = errors.New("clip no longer exists")

const sqlMediaJob = `
	SELECT media_key, media_type, orientation, duration_seconds, width, height, fps,
	       preview_key, thumbnail_key
	FROM videos WHERE id = $1`

// sqlMediaDone fills what the line left out from the probe and marks the
// clip ready. When media_type or orientation change, the embedded text
// changed: the embedding is reset for the worker to make again.
const sqlMediaDone = `
	WITH old AS (SELECT media_type, orientation FROM videos WHERE id = $1)
	UPDATE videos v SET
	       media_type = $2,
	       orientation = coalesce(v.orientation, $3),
	       duration_seconds = coalesce(v.duration_seconds, $4),
	       width = coalesce(v.width, $5), height = coalesce(v.height, $6),
	       fps = coalesce(v.fps, $7),
	       preview_key = coalesce(v.preview_key, $8), thumbnail_key = coalesce(v.thumbnail_key, $9),
	       media_status = 'ready', media_error = NULL, media_processed_at = now(), updated_at = now(),
	       embedding_status = CASE WHEN (old.media_type, old.orientation) IS DISTINCT FROM ($2, coalesce(v.orientation, $3))
	                               THEN 'pending' ELSE v.embedding_status END
	FROM old WHERE v.id = $1
	RETURNING (old.media_type, old.orientation) IS DISTINCT FROM (v.media_type, v.orientation)`

// ProcessMedia probes a clip's full-quality file, fills the figures its
// line left out, and makes the preview and thumbnail it lacks. A file the
// probe cannot read is an *UnreadableError (the caller marks the clip
// failed); other errors are worth a retry.
func (s *Service) ProcessMedia(ctx context.Context, id uuid.UUID) error {
	if s.media == nil {
		return errors.New("media job: no media store configured")
	}
	var key, mediaType string
	var orientation, preview, thumb *string
	var duration, fps *float64
	var width, height *int
	err := s.pool.QueryRow(ctx, sqlMediaJob, id).Scan(&key, &mediaType, &orientation, &duration, &width, &height, &fps, &preview, &thumb)
	if errors.Is(err, pgx.ErrNoRows) {
		return ErrVideoGone
	}
	if err != nil {
		return fmt.Errorf("media job: %w", err)
	}
	src, err := MediaSource(ctx, s.media, key)
	if err != nil {
		return err
	}
	p, err := ProbeMedia(ctx, src)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "broll-media-*")
	if err != nil {
		return fmt.Errorf("media job: %w", err)
	}
	defer os.RemoveAll(tmp)
	prefix := "clips/" + id.String() + "/"
	var newPreview, newThumb *string
	if preview == nil && p.MediaType == "video" {
		k, err := s.makeMedia(ctx, filepath.Join(tmp, "preview.mp4"), prefix+"preview.mp4", func(dst string) error {
			return MakePreview(ctx, src, dst)
		})
		if err != nil {
			return err
		}
		newPreview = &k
	}
	if thumb == nil {
		at := min(1, p.Duration/2)
		k, err := s.makeMedia(ctx, filepath.Join(tmp, "thumbnail.jpg"), prefix+"thumbnail.jpg", func(dst string) error {
			return MakeThumbnail(ctx, src, dst, at)
		})
		if err != nil {
			return err
		}
		newThumb = &k
	}
	var dur, rate *float64
	if p.MediaType == "video" {
		dur, rate = &p.Duration, &p.FPS
	}
	var textChanged bool
	err = s.pool.QueryRow(ctx, sqlMediaDone, id, p.MediaType, p.Orientation(), dur, p.Width, p.Height, rate, newPreview, newThumb).Scan(&textChanged)
	if errors.Is(err, pgx.ErrNoRows) {
		return ErrVideoGone
	}
	if err != nil {
		return fmt.Errorf("media job: %w", err)
	}
	if textChanged {
		if _, err := s.enqueue(ctx, []uuid.UUID{id}); err != nil {
			return fmt.Errorf("media job: queue embedding: %w", err)
		}
	}
	return nil
}

// makeMedia runs produce into a temporary file and stores it under key.
func (s *Service) makeMedia(ctx context.Context, tmp, key string, produce func(dst string) error) (string, error) {
	if err := produce(tmp); err != nil {
		return "", err
	}
	if _, err := s.putFile(ctx, key, tmp); err != nil {
		return "", err
	}
	return key, nil
}

// MarkMediaFailed records why a clip's file could not be processed, for
// `brollctl clips status`.
func (s *Service) MarkMediaFailed(ctx context.Context, id uuid.UUID, reason string) error {
	_, err := s.pool.Exec(ctx, `
		UPDATE videos SET media_status = 'failed', media_error = $2, media_processed_at = now()
		WHERE id = $1`, id, reason[:min(len(reason), 500)])
	return err
}
