package collections

import (
	"context"
	"time"

	"broll/internal/database"
)

// SweepBatch is how many collections one sweep statement removes at most:
// with their items up to 100,000 rows, well inside the statement timeout.
const SweepBatch = 20

// SweepRevoked removes the collections of keys revoked more than the
// retention before now (and their items), a batch at a time until none
// is left; it returns how many it removed. Until then a revoked key's
// collections stay readable by its root. The worker runs it periodically.
func (s *Service) SweepRevoked(ctx context.Context, now time.Time) (int, error) {
	cutoff := now.Add(-s.opts.Retention)
	total := 0
	for {
		var n int
		if err := s.pool.QueryRow(ctx, sweepSQL, cutoff, SweepBatch).Scan(&n); err != nil {
			return total, database.Interpret(err, notFoundMsg)
		}
		total += n
		if n < SweepBatch {
			return total, nil
		}
	}
}
