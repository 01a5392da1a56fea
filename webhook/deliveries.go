package webhook

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"broll/internal/database"
	"broll/internal/paging"
)

// Attempt is one entry of an endpoint's delivery log.
type Attempt struct {
	EventID     string
	EventType   string
	AttemptedAt time.Time
	StatusCode  *int
	Duration    time.Duration
	Error       string
	// State is the delivery's state now: pending, delivered or failed;
	// NextAttemptAt is set while it is pending.
	State         string
	Attempts      int
	NextAttemptAt *time.Time
}

// MaxLogEntries bounds one read of the delivery log.
const MaxLogEntries = 100

// LogBounds are the delivery log's paging limits, for the adapters to read
// a request's limit with: MaxLogEntries by default, a larger limit clamped
// to it, as on every list. It has one page: no cursor, page or offset.
var LogBounds = paging.Bounds{DefaultLimit: MaxLogEntries, MaxLimit: MaxLogEntries, Window: MaxLogEntries,
	NoOffset: true, NoCursor: true}

// Deliveries returns the endpoint's latest attempts, newest first.
func (s *Service) Deliveries(ctx context.Context, o Owner, id uuid.UUID, limit int) ([]Attempt, error) {
	if _, err := s.Get(ctx, o, id); err != nil {
		return nil, err
	}
	if limit <= 0 || limit > MaxLogEntries {
		limit = MaxLogEntries
	}
	out, err := database.Select(ctx, s.pool, func(r pgx.CollectableRow) (Attempt, error) {
		var a Attempt
		var ms int
		err := r.Scan(&a.EventID, &a.EventType, &a.AttemptedAt, &a.StatusCode, &ms, &a.Error, &a.State, &a.Attempts, &a.NextAttemptAt)
		a.Duration = time.Duration(ms) * time.Millisecond
		return a, err
	}, deliveriesSQL, id, limit)
	if err != nil {
		return nil, fmt.Errorf("webhook deliveries: %w", err)
	}
	return out, nil
}
