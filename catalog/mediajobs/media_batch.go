package mediajobs

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"

	"broll/catalog"
	"broll/catalog/media"
	"broll/internal/database"
	"broll/internal/outbox"
)

// Media batches. A new clip needs its file probed, its text embedded and
// then to go on sale; done one clip at a time, with an ffprobe process, a
// transaction and a row update for each step, that was most of an
// import's time to searchable. A batch does it for many clips at once:
// ProbePending probes them (in-process for MP4, see probeStored), the
// caller embeds the texts the probe settled, and StoreProbed writes
// figures, vectors and the sale in one statement per batch, inside one
// transaction: each clip's row is rewritten once, and goes into the
// search indexes with its vector. Previews and thumbnails the import did
// not bring are recorded as jobs of their own (kind previews): encoding
// them never holds a clip back from sale.

// probeParallel bounds the probes one batch runs at once: in-process
// reads wait on the store; ffprobe, for other containers, on a core.
const probeParallel = 4

// ProbedClip is one clip of a media batch after its probe.
type ProbedClip struct {
	ID uuid.UUID
	// Err is nil when the file is sound, an *media.UnreadableError when it is
	// refused, and anything else when the probe is worth another try.
	Err error
	// Text is the clip's embedded text with the probe's figures in it;
	// NeedsVector says the clip has no current vector of the model for it.
	Text        string
	NeedsVector bool

	probe     media.Probe
	updatedAt time.Time
}

// ProbePending probes the files of those of ids still waiting for it (a
// clip deleted, or probed by an earlier run of the same job, is left out)
// and says, for a worker embedding with model, which need a vector.
func (s *Service) ProbePending(ctx context.Context, ids []uuid.UUID, model string) ([]ProbedClip, error) {
	if s.media == nil {
		return nil, errors.New("media batch: no media store configured")
	}
	type row struct {
		clip                        ProbedClip
		key, mediaType, orientation string
		text                        func(mediaType, orientation string) string
		readyWith                   string
	}
	rows, err := database.Select(ctx, s.pool, func(r pgx.CollectableRow) (row, error) {
		var w row
		var title, desc, emotion, gender, age, loc string
		var tags []string
		err := r.Scan(&w.clip.ID, &w.key, &w.clip.updatedAt, &title, &desc, &tags, &emotion, &gender, &age, &loc,
			&w.mediaType, &w.orientation, &w.readyWith)
		w.text = func(media, orient string) string {
			return catalog.DocumentText(title, desc, tags, emotion, gender, age, loc, media, orient)
		}
		return w, err
	}, sqlPendingMedia, ids)
	if err != nil {
		return nil, fmt.Errorf("media batch: %w", err)
	}
	out := make([]ProbedClip, len(rows))
	sem := make(chan struct{}, probeParallel)
	var wg sync.WaitGroup
	for i := range rows {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			w := &rows[i]
			c := w.clip
			c.probe, c.Err = s.probeStored(ctx, w.key)
			if c.Err == nil {
				// As sqlProbedDone: the file's media type and orientation.
				orient := c.probe.Orientation()
				if c.probe.Width == 0 || c.probe.Height == 0 {
					orient = w.orientation
				}
				c.Text = w.text(c.probe.MediaType, orient)
				c.NeedsVector = w.readyWith != model || c.Text != w.text(w.mediaType, w.orientation)
			}
			out[i] = c
		})
	}
	wg.Wait()
	return out, nil
}

// ProbedResult counts what StoreProbed wrote.
type ProbedResult struct {
	// Ready clips passed the probe and are on sale (unless retired);
	// Embedded of them got their vector with it.
	Ready, Embedded int
	// Refused clips' files failed the probe; they are off sale, failed.
	Refused int
	// Skipped clips changed (imported again) or went since they were
	// probed: the job of their new state handles them.
	Skipped int
}

// StoreProbed writes a probed batch in one transaction: the clips whose
// file passed go on sale with their figures and, when vectors has one for
// them, their vector of model; refused ones are marked failed. Jobs are
// recorded for what is left: a vector the batch did not bring (the
// embedder failed, or none was asked for) and previews or thumbnails to
// make. Clips whose probe is to be tried again (Err not refused) are left
// as they are.
func (s *Service) StoreProbed(ctx context.Context, model string, clips []ProbedClip, vectors map[uuid.UUID][]float32) (ProbedResult, error) {
	var res ProbedResult
	var ready []ProbedClip
	var refusedIDs []uuid.UUID
	var reasons []string
	var refusedAt []time.Time
	for _, c := range clips {
		var unreadable *media.UnreadableError
		switch {
		case c.Err == nil:
			ready = append(ready, c)
		case errors.As(c.Err, &unreadable):
			refusedIDs, reasons, refusedAt = append(refusedIDs, c.ID), append(reasons, unreadable.Reason), append(refusedAt, c.updatedAt)
		}
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return res, fmt.Errorf("media batch: %w", err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	var embedDue, previewsDue, embedded []uuid.UUID
	if len(ready) > 0 {
		probed := make([]catalog.Probed, len(ready))
		vecs := make([]*pgvector.Vector, len(ready))
		readAt := make([]time.Time, len(ready))
		for i, c := range ready {
			probed[i] = catalog.Probed{ID: c.ID, Probe: c.probe}
			if v, ok := vectors[c.ID]; ok {
				vec := pgvector.NewVector(v)
				vecs[i] = &vec
			}
			readAt[i] = c.updatedAt
		}
		args, trailing := catalog.ProbeArgs(probed)
		args = append(args, vecs, model, readAt, trailing)
		rows, err := tx.Query(ctx, sqlProbedDone, args...)
		if err != nil {
			return res, fmt.Errorf("media batch: %w", err)
		}
		var id uuid.UUID
		var gotVector, needVector, needPreviews bool
		_, err = pgx.ForEachRow(rows, []any{&id, &gotVector, &needVector, &needPreviews}, func() error {
			res.Ready++
			if gotVector {
				embedded = append(embedded, id)
			}
			if needVector {
				embedDue = append(embedDue, id)
			}
			if needPreviews {
				previewsDue = append(previewsDue, id)
			}
			return nil
		})
		if err != nil {
			return res, fmt.Errorf("media batch: %w", err)
		}
	}
	if len(refusedIDs) > 0 {
		tag, err := tx.Exec(ctx, sqlProbedRefused, refusedIDs, reasons, refusedAt)
		if err != nil {
			return res, fmt.Errorf("media batch: %w", err)
		}
		res.Refused = int(tag.RowsAffected())
	}
	if len(embedded) > 0 {
		if _, err := tx.Exec(ctx, sqlEmbeddedEvent, outbox.ClipsEmbedded, embedded, model, outbox.Trace(ctx)); err != nil {
			return res, fmt.Errorf("media batch: %w", err)
		}
	}
	jobs, err := recordJobs(ctx, tx, jobEmbed, embedDue)
	if err != nil {
		return res, fmt.Errorf("media batch: %w", err)
	}
	previewJobs, err := recordJobs(ctx, tx, jobPreviews, previewsDue)
	if err != nil {
		return res, fmt.Errorf("media batch: %w", err)
	}
	// The batch puts clips on sale or refuses them: every node's copies
	// of clip details learn of it (change.go).
	if err := s.commit(ctx, tx); err != nil {
		return res, fmt.Errorf("media batch: %w", err)
	}
	res.Embedded = len(embedded)
	res.Skipped = len(ready) + len(refusedIDs) - res.Ready - res.Refused
	// Recorded: a queue that is away delays the jobs only.
	_, _ = s.relay(ctx, append(jobs, previewJobs...))
	return res, nil
}
