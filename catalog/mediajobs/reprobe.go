package mediajobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"broll/catalog"
	"broll/catalog/media"
	"broll/internal/apperr"
	"broll/internal/database"
)

// Reprobing: `brollctl clips reprobe` reads stored clips' files again
// after a change of the probe (geometry as shown, what it refuses and
// tolerates). Reprobe records a job of kind reprobe per clip in the job
// outbox, in the transaction that opens the run (media_reprobes), as an
// import records its media jobs; the worker's handler (ReprobeClips)
// probes the files, rewrites the clips whose figures or soundness
// changed, re-queues the embedding of those whose embedded text changed,
// and records per clip what it found, which ReprobeReport reads.

// Reprobe outcomes, per clip.
const (
	ReprobeUnchanged = "unchanged" // the file reads as the clip says
	ReprobeChanged   = "changed"   // figures or soundness corrected
	ReprobeRefused   = "refused"   // the file is not sound: off sale
	ReprobeSkipped   = "skipped"   // imported again meanwhile: its new file's probe decides
	ReprobeError     = "error"     // the file could not be read (the store), clip left as it was
)

// ReprobeFilter selects the stored clips Reprobe reads again: every clip
// whose file was probed (passed or refused), or the one clip ID, or those
// probed at or after Since.
type ReprobeFilter struct {
	ID    *uuid.UUID
	Since *time.Time
}

// ReprobeQueued is a run just opened.
type ReprobeQueued struct {
	RunID  uuid.UUID `json:"run_id"`
	Queued int       `json:"queued"`
}

// Reprobe opens a run over the clips f selects and queues them, through
// the job outbox: with the queue away the run still opens and the
// worker's relay queues it later. Clips waiting for their first probe are
// left to it. An unknown ID is not_found.
func (s *Service) Reprobe(ctx context.Context, f ReprobeFilter) (ReprobeQueued, error) {
	if s.queue == nil {
		return ReprobeQueued{}, errors.New("reprobe: no queue configured")
	}
	run := ReprobeQueued{RunID: uuid.New()}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return run, fmt.Errorf("reprobe: %w", err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	ids, err := database.Select(ctx, tx, pgx.RowTo[uuid.UUID], sqlReprobeOpen, run.RunID, f.ID, f.Since)
	if err != nil {
		return run, fmt.Errorf("reprobe: %w", err)
	}
	if f.ID != nil && len(ids) == 0 {
		var exists bool
		if err := tx.QueryRow(ctx, sqlVideoExists, *f.ID).Scan(&exists); err != nil {
			return run, fmt.Errorf("reprobe: %w", err)
		}
		if !exists {
			return run, apperr.NotFoundf("video %s not found", *f.ID)
		}
	}
	jobs, err := recordJobs(ctx, tx, jobReprobe, ids)
	if err != nil {
		return run, fmt.Errorf("reprobe: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return run, fmt.Errorf("reprobe: %w", err)
	}
	run.Queued = len(ids)
	_, _ = s.relay(ctx, jobs)
	return run, nil
}

// Change is one thing a reprobe changed on a clip: a figure, media_type,
// media_status or media_error, from its old value to its new one.
type Change struct {
	Field string `json:"field"`
	From  any    `json:"from"`
	To    any    `json:"to"`
}

// reprobeRow is a clip of an open run, as ReprobeClips reads it.
type reprobeRow struct {
	id        uuid.UUID
	key       string
	updatedAt time.Time
	before    clipMedia
	probe     media.Probe
	err       error
}

// clipMedia is what a reprobe may change on a clip, as JSON.
type clipMedia struct {
	Figures map[string]any `json:"figures"`
	Type    string         `json:"media_type"`
	Status  string         `json:"media_status"`
	Error   *string        `json:"media_error"`
}

// changes lists what differs from a to b, figures first (in the order of
// broll_media_figures), then type, status and error.
func (a clipMedia) changes(b clipMedia) []Change {
	var out []Change
	for _, f := range []string{"width", "height", "duration_seconds", "fps", "orientation"} {
		if !reflect.DeepEqual(a.Figures[f], b.Figures[f]) {
			out = append(out, Change{Field: f, From: a.Figures[f], To: b.Figures[f]})
		}
	}
	if a.Type != b.Type {
		out = append(out, Change{Field: "media_type", From: a.Type, To: b.Type})
	}
	if a.Status != b.Status {
		out = append(out, Change{Field: "media_status", From: a.Status, To: b.Status})
	}
	if !reflect.DeepEqual(a.Error, b.Error) {
		out = append(out, Change{Field: "media_error", From: a.Error, To: b.Error})
	}
	return out
}

// ReprobeClips probes again the files of those of ids with an open
// reprobe, and stores in one transaction what each shows: a sound file's
// figures (the file's, as a first probe stores them) and the clip back on
// sale if its file had failed; an unsound one failed with its reason and
// off sale. A clip whose embedded text changed keeps its vector for search
// until the new one, queued here (the job outbox, as `clips reembed`), is
// stored. An error means the store could not be read: the task is
// retried, and ReprobeGaveUp records clips still open when it is not.
func (s *Service) ReprobeClips(ctx context.Context, ids []uuid.UUID) error {
	if s.media == nil {
		return errors.New("reprobe: no media store configured")
	}
	rows, err := database.Select(ctx, s.pool, func(r pgx.CollectableRow) (reprobeRow, error) {
		var w reprobeRow
		var before []byte
		if err := r.Scan(&w.id, &w.key, &w.updatedAt, &before); err != nil {
			return w, err
		}
		return w, json.Unmarshal(before, &w.before)
	}, sqlReprobeRead, ids)
	if err != nil {
		return fmt.Errorf("reprobe: %w", err)
	}
	sem := make(chan struct{}, probeParallel)
	var wg sync.WaitGroup
	for i := range rows {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			rows[i].probe, rows[i].err = s.probeStored(ctx, rows[i].key)
		})
	}
	wg.Wait()

	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("reprobe: %w", err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, sqlReprobeSkipPending, ids); err != nil {
		return fmt.Errorf("reprobe: %w", err)
	}
	var retry error
	var embedDue []uuid.UUID
	for _, w := range rows {
		var unreadable *media.UnreadableError
		var after clipMedia
		outcome, reason := ReprobeUnchanged, ""
		switch {
		case w.err == nil:
			args, trailing := catalog.ProbeArgs([]catalog.Probed{{ID: w.id, Probe: w.probe}})
			args = append(args, []time.Time{w.updatedAt}, trailing)
			var afterJSON []byte
			var embed bool
			err = tx.QueryRow(ctx, sqlReprobeSound, args...).Scan(&afterJSON, &embed)
			if err == nil {
				err = json.Unmarshal(afterJSON, &after)
			}
			if embed {
				embedDue = append(embedDue, w.id)
			}
		case errors.As(w.err, &unreadable):
			var afterJSON []byte
			outcome, reason = ReprobeRefused, unreadable.Reason
			err = tx.QueryRow(ctx, sqlReprobeRefused, w.id, reason, w.updatedAt).Scan(&afterJSON)
			if err == nil {
				err = json.Unmarshal(afterJSON, &after)
			}
		default:
			retry = w.err
			continue
		}
		if database.NoRows(err) {
			outcome, err = ReprobeSkipped, nil
		}
		if err != nil {
			return fmt.Errorf("reprobe: %w", err)
		}
		var changes []Change
		if outcome != ReprobeSkipped {
			changes = w.before.changes(after)
		}
		if outcome == ReprobeUnchanged && len(changes) > 0 {
			outcome = ReprobeChanged
		}
		if _, err := tx.Exec(ctx, sqlReprobeDone, w.id, outcome, jsonOrNil(changes), nilIfEmpty(reason)); err != nil {
			return fmt.Errorf("reprobe: %w", err)
		}
	}
	jobs, err := recordJobs(ctx, tx, jobEmbed, embedDue)
	if err != nil {
		return fmt.Errorf("reprobe: %w", err)
	}
	if err := s.commit(ctx, tx); err != nil {
		return fmt.Errorf("reprobe: %w", err)
	}
	// Recorded: a queue that is away delays the embeddings only.
	_, _ = s.relay(ctx, jobs)
	if retry != nil {
		return fmt.Errorf("reprobe: %w", retry)
	}
	return nil
}

// ReprobeGaveUp closes the open reprobes of ids with outcome error and
// reason: their files could not be read, and the clips stay as they were.
func (s *Service) ReprobeGaveUp(ctx context.Context, ids []uuid.UUID, reason string) error {
	if _, err := s.pool.Exec(ctx, sqlReprobeGaveUp, ids, reason[:min(len(reason), 500)]); err != nil {
		return fmt.Errorf("reprobe: %w", err)
	}
	return nil
}

func jsonOrNil(changes []Change) []byte {
	if len(changes) == 0 {
		return nil
	}
	b, _ := json.Marshal(changes)
	return b
}

func nilIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
