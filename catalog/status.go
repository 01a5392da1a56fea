package catalog

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"broll/internal/apperr"
	"broll/internal/database"
)

// Status is the embedding progress of the catalog for `brollctl clips
// status`. Every clip counts, retired ones too: purchase history is still
// searched by meaning, so their vectors must stay current.
type Status struct {
	Total int `json:"total"`
	// Embedded clips have a vector made by the current model.
	Embedded int `json:"embedded"`
	// Pending clips wait for a vector, or have one of another model that
	// semantic search no longer compares, or one `clips reembed --all`
	// marked stale (it serves semantic search until the new one is stored).
	Pending int `json:"pending"`
	// Failed clips ran out of retries; `clips reembed --failed` retries them.
	Failed int    `json:"failed"`
	Model  string `json:"model"`
	// Media is the worker's probing of the clips' files.
	Media MediaStatus `json:"media"`
}

// MediaStatus counts clips by media processing state; FailedClips lists
// (some of) the failed ones with the reason.
type MediaStatus struct {
	Pending     int              `json:"pending"`
	Ready       int              `json:"ready"`
	Failed      int              `json:"failed"`
	FailedClips []MediaFailedRow `json:"failed_clips,omitempty"`
	// Mismatched clips' lines give a figure their file disagrees with (the
	// clip shows the file's); MismatchedClips lists the latest of them.
	Mismatched      int                `json:"mismatched"`
	MismatchedClips []MediaMismatchRow `json:"mismatched_clips,omitempty"`
	// TrailingBytes clips' files end in bytes that form no box, which the
	// probe tolerated as players do; TrailingBytesClips lists the latest.
	TrailingBytes      int                `json:"trailing_bytes"`
	TrailingBytesClips []MediaTrailingRow `json:"trailing_bytes_clips,omitempty"`
}

// MediaMismatchRow is one clip whose line disagrees with its file.
type MediaMismatchRow struct {
	ID         uuid.UUID  `json:"id"`
	Title      string     `json:"title"`
	Mismatches []Mismatch `json:"mismatches"`
}

// MediaTrailingRow is one clip whose file carries trailing bytes.
type MediaTrailingRow struct {
	ID            uuid.UUID `json:"id"`
	Title         string    `json:"title"`
	TrailingBytes int64     `json:"trailing_bytes"`
}

// Mismatch is one figure (width, height, duration_seconds, fps or
// orientation) on which a clip's line and its probed file disagree: a
// duration by more than one frame, an fps by more than 1%, the others at
// all (SQL function broll_media_mismatches). The clip shows Probed.
type Mismatch struct {
	Field  string `json:"field"`
	Listed any    `json:"listed"`
	Probed any    `json:"probed"`
}

// MediaFailedRow is one clip whose file could not be processed.
type MediaFailedRow struct {
	ID     uuid.UUID `json:"id"`
	Title  string    `json:"title"`
	Reason string    `json:"reason"`
}

// failedShown bounds the failed clips listed by status.
const failedShown = 20

// Reembed modes.
const (
	ReembedStale  = "stale"
	ReembedFailed = "failed"
	ReembedAll    = "all"
)

// Status counts clips by embedding state, judged against currentModel.
func (s *Service) Status(ctx context.Context, currentModel string) (Status, error) {
	st := Status{Model: currentModel}
	err := s.pool.QueryRow(ctx, sqlEmbeddingStatus, currentModel).Scan(&st.Total, &st.Embedded, &st.Failed)
	if err != nil {
		return Status{}, fmt.Errorf("embedding status: %w", err)
	}
	st.Pending = st.Total - st.Embedded - st.Failed
	err = s.pool.QueryRow(ctx, sqlMediaStatus).Scan(&st.Media.Pending, &st.Media.Ready, &st.Media.Failed)
	if err != nil {
		return Status{}, fmt.Errorf("media status: %w", err)
	}
	st.Media.FailedClips, err = database.Select(ctx, s.pool, pgx.RowToStructByName[MediaFailedRow], sqlMediaFailedClips, failedShown)
	if err != nil {
		return Status{}, fmt.Errorf("media status: %w", err)
	}
	err = s.pool.QueryRow(ctx, sqlMediaNotedCounts).Scan(&st.Media.Mismatched, &st.Media.TrailingBytes)
	if err != nil {
		return Status{}, fmt.Errorf("media status: %w", err)
	}
	st.Media.MismatchedClips, err = database.Select(ctx, s.pool, pgx.RowToStructByName[MediaMismatchRow], sqlMediaMismatchedClips, failedShown)
	if err != nil {
		return Status{}, fmt.Errorf("media status: %w", err)
	}
	st.Media.TrailingBytesClips, err = database.Select(ctx, s.pool, pgx.RowToStructByName[MediaTrailingRow], sqlMediaTrailingClips, failedShown)
	if err != nil {
		return Status{}, fmt.Errorf("media status: %w", err)
	}
	return st, nil
}

// Reembed queues clips for the embedding worker and returns how many were
// queued. mode "stale" (or "") queues clips that are pending, stale or have
// a vector of a model other than currentModel; "failed" gives failed clips
// another round of retries; "all" makes every vector again, each old one
// serving semantic search until its replacement is stored. The jobs are
// recorded with the change (job outbox): with the queue away the command
// still succeeds, and the worker's relay queues them once it is back.
func (s *Service) Reembed(ctx context.Context, mode, currentModel string) (int, error) {
	if s.queue == nil {
		return 0, errors.New("reembed: no embedding queue configured")
	}
	var query string
	var args []any
	switch mode {
	case "", ReembedStale:
		query, args = sqlStaleClips, []any{currentModel}
	case ReembedFailed:
		query = sqlRequeueFailed
	case ReembedAll:
		query = sqlResetAll
	default:
		return 0, apperr.InvalidField("mode", "unknown reembed mode %q (one of %s, %s, %s)",
			apperr.Clip(mode), ReembedStale, ReembedFailed, ReembedAll)
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return 0, fmt.Errorf("reembed: %w", err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	ids, err := database.Select(ctx, tx, pgx.RowTo[uuid.UUID], query, args...)
	if err != nil {
		return 0, fmt.Errorf("reembed: %w", err)
	}
	jobs, err := recordJobs(ctx, tx, jobEmbed, ids)
	if err != nil {
		return 0, fmt.Errorf("reembed: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, fmt.Errorf("reembed: %w", err)
	}
	_, _ = s.relay(ctx, jobs)
	return len(ids), nil
}

// ClipState is a clip as content operations see it: whether customers can
// see and buy it (Listed), and why not when its media failed.
type ClipState struct {
	ID              uuid.UUID
	Title           string
	MediaStatus     string // pending, ready or failed
	MediaError      *string
	MediaProcessed  *time.Time
	Listed          bool
	RetiredAt       *time.Time
	EmbeddingStatus string
	CreatedAt       time.Time
	// Mismatches are the figures on which the clip's line and its file
	// disagree (none until the probe ran); TrailingBytes the bytes after
	// the file's last box that the probe tolerated.
	Mismatches    []Mismatch
	TrailingBytes *int64
}

// ClipState returns any clip, listed or not, with its media state.
func (s *Service) ClipState(ctx context.Context, id uuid.UUID) (ClipState, error) {
	rows, err := s.pool.Query(ctx, sqlClipState, id)
	var c ClipState
	if err == nil {
		c, err = pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[ClipState])
	}
	if database.NoRows(err) {
		return ClipState{}, apperr.NotFoundf("video %s not found", id)
	}
	if err != nil {
		return ClipState{}, fmt.Errorf("clip state: %w", err)
	}
	return c, nil
}
