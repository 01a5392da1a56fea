package mediajobs

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"broll/internal/apperr"
	"broll/internal/database"
)

// ReprobeReport is what a reprobe run found so far: counts by outcome,
// and the clips it changed, refused or could not read, with what and why.
type ReprobeReport struct {
	RunID   uuid.UUID `json:"run_id"`
	Queued  int       `json:"queued"`
	Done    int       `json:"done"`
	Pending int       `json:"pending"`
	// Unchanged and Skipped are counted only: nothing to do about them.
	Unchanged int            `json:"unchanged"`
	Skipped   int            `json:"skipped"`
	Changed   []ReprobedClip `json:"changed"`
	Refused   []ReprobedClip `json:"refused"`
	Errors    []ReprobedClip `json:"errors"`
}

// ReprobedClip is one clip of a run's report.
type ReprobedClip struct {
	ID      uuid.UUID `json:"id"`
	Title   string    `json:"title"`
	Changes []Change  `json:"changes,omitempty"`
	Reason  string    `json:"reason,omitempty"`
}

// ReprobeReport reads run's report; a run of which no clip is left (or
// that never was) is not_found. A clip is in one run at a time: queued
// again by a later run, it leaves the earlier one's report.
func (s *Service) ReprobeReport(ctx context.Context, run uuid.UUID) (ReprobeReport, error) {
	rep := ReprobeReport{RunID: run, Changed: []ReprobedClip{}, Refused: []ReprobedClip{}, Errors: []ReprobedClip{}}
	type row struct {
		ID      uuid.UUID
		Title   string
		Outcome *string
		Changes []Change
		Reason  *string
	}
	rows, err := database.Select(ctx, s.pool, pgx.RowToStructByName[row], sqlReprobeReport, run)
	if err != nil {
		return rep, fmt.Errorf("reprobe report: %w", err)
	}
	if len(rows) == 0 {
		return rep, apperr.NotFoundf("reprobe run %s not found", run)
	}
	rep.Queued = len(rows)
	for _, r := range rows {
		if r.Outcome == nil {
			rep.Pending++
			continue
		}
		rep.Done++
		c := ReprobedClip{ID: r.ID, Title: r.Title, Changes: r.Changes}
		if r.Reason != nil {
			c.Reason = *r.Reason
		}
		switch *r.Outcome {
		case ReprobeUnchanged:
			rep.Unchanged++
		case ReprobeSkipped:
			rep.Skipped++
		case ReprobeChanged:
			rep.Changed = append(rep.Changed, c)
		case ReprobeRefused:
			rep.Refused = append(rep.Refused, c)
		default:
			rep.Errors = append(rep.Errors, c)
		}
	}
	return rep, nil
}

// ReprobeProgress counts run's clips and those done, cheaply enough to
// poll (ReprobeReport reads every clip of the run).
func (s *Service) ReprobeProgress(ctx context.Context, run uuid.UUID) (queued, done int, err error) {
	if err := s.pool.QueryRow(ctx, sqlReprobeProgress, run).Scan(&queued, &done); err != nil {
		return 0, 0, fmt.Errorf("reprobe progress: %w", err)
	}
	return queued, done, nil
}
