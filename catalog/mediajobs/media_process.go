package mediajobs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"broll/catalog"
	"broll/catalog/media"
	"broll/internal/database"
)

// ErrVideoGone is a video deleted before its media job ran.
var ErrVideoGone = errors.New("clip no longer exists")

// ProcessMedia probes a clip's full-quality file, fills the figures its
// line left out, and makes the preview and thumbnail it lacks. A file the
// probe cannot read is a *media.UnreadableError (the caller marks the clip
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
	if database.NoRows(err) {
		return ErrVideoGone
	}
	if err != nil {
		return fmt.Errorf("media job: %w", err)
	}
	src, err := media.Source(ctx, s.media, key)
	if err != nil {
		return err
	}
	p, err := s.probeStored(ctx, key)
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
			return media.MakePreview(ctx, src, dst)
		})
		if err != nil {
			return err
		}
		newPreview = &k
	}
	if thumb == nil {
		at := min(1, p.Duration/2)
		k, err := s.makeMedia(ctx, filepath.Join(tmp, "thumbnail.jpg"), prefix+"thumbnail.jpg", func(dst string) error {
			return media.MakeThumbnail(ctx, src, dst, at)
		})
		if err != nil {
			return err
		}
		newThumb = &k
	}
	return s.mediaDone(ctx, catalog.Probed{ID: id, Probe: p, Preview: newPreview, Thumbnail: newThumb})
}

// mediaDone records a clip's probe and puts it on sale; when the probe
// changed its embedded text, the embedding job is recorded in the same
// transaction (job outbox) and handed to the queue after the commit.
func (s *Service) mediaDone(ctx context.Context, c catalog.Probed) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("media job: %w", err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	var textChanged, embedDue bool
	var done uuid.UUID
	err = tx.QueryRow(ctx, catalog.SQLMediaDone, catalog.MediaDoneArgs([]catalog.Probed{c})...).Scan(&done, &textChanged, &embedDue)
	if database.NoRows(err) {
		return ErrVideoGone
	}
	if err != nil {
		return fmt.Errorf("media job: %w", err)
	}
	var jobs []int64
	// The import leaves a clip awaiting its probe unembedded (its text may
	// change with the probe's figures).
	if textChanged || embedDue {
		if jobs, err = recordJobs(ctx, tx, jobEmbed, []uuid.UUID{c.ID}); err != nil {
			return fmt.Errorf("media job: %w", err)
		}
	}
	if err := s.commit(ctx, tx); err != nil {
		return fmt.Errorf("media job: %w", err)
	}
	// Recorded: a queue that is away delays the embedding only.
	_, _ = s.relay(ctx, jobs)
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
// `brollctl clips status` and the ops API. The clip stays out of the
// catalog (notLive): it is never listed, shown or sold to customers.
func (s *Service) MarkMediaFailed(ctx context.Context, id uuid.UUID, reason string) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, sqlMarkMediaFailed, id, reason[:min(len(reason), 500)])
		return err
	})
	if err != nil {
		return fmt.Errorf("mark media failed: %w", err)
	}
	return nil
}
