package tenancy

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"broll/internal/database"
)

// HourCount is the number of requests an account's keys made in one hour.
type HourCount struct {
	Hour     time.Time // start of the hour, UTC
	Requests int64
}

// RequestsByHour returns the requests of every key of the account in each of
// the hours whose buckets lie in the `hours` hours up to and including the
// hour of now, oldest first. Counts still buffered in Redis are not in
// Postgres yet: call Usage.Flush first when the numbers must be exact.
func (s *Service) RequestsByHour(ctx context.Context, accountID uuid.UUID, now time.Time, hours int) ([]HourCount, error) {
	if hours < 1 {
		return nil, nil
	}
	last := hourOf(now)
	first := last.Add(-time.Duration(hours-1) * time.Hour)
	out, err := database.Select(ctx, s.pool, func(r pgx.CollectableRow) (HourCount, error) {
		var h HourCount
		err := r.Scan(&h.Hour, &h.Requests)
		h.Hour = h.Hour.UTC()
		return h, err
	}, requestsByHourSQL, accountID, first, last)
	if err != nil {
		return nil, fmt.Errorf("requests by hour: %w", err)
	}
	return out, nil
}
