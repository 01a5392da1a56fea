package catalog

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"broll/internal/apperr"
)

// Retired is the outcome of retiring a clip.
type Retired struct {
	ID        uuid.UUID
	RetiredAt time.Time
	// Already is true when the clip had been retired before; RetiredAt is
	// then the time of that first retirement.
	Already bool
}

// Retire takes a clip out of the catalog: it no longer appears in search,
// filters or details and can no longer be bought. Its buyers keep it: their
// purchase history, GetVideoFor and download links still work. Retiring is
// idempotent, and final: importing the clip again updates it but leaves it
// retired.
func (s *Service) Retire(ctx context.Context, id uuid.UUID) (Retired, error) {
	var now, before *time.Time
	var exists bool
	err := s.inTx(ctx, func(tx pgx.Tx) error { return tx.QueryRow(ctx, sqlRetire, id).Scan(&now, &before, &exists) })
	if err != nil {
		return Retired{}, fmt.Errorf("retire: %w", err)
	}
	switch {
	case !exists:
		return Retired{}, apperr.NotFoundf("video %s not found", id)
	case now != nil:
		return Retired{ID: id, RetiredAt: *now}, nil
	case before == nil:
		// A concurrent Retire won the row after this statement's snapshot
		// was taken: read what it wrote.
		var at time.Time
		if err := s.pool.QueryRow(ctx, sqlRetiredAt, id).Scan(&at); err != nil {
			return Retired{}, fmt.Errorf("retire: %w", err)
		}
		return Retired{ID: id, RetiredAt: at, Already: true}, nil
	default:
		return Retired{ID: id, RetiredAt: *before, Already: true}, nil
	}
}
