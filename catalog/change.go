package catalog

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"broll/internal/admission"
	"broll/internal/database"
)

// Every write of a clip's row commits through commit or inTx, which hold
// the catalog (admission.Catalog) across the commit: nodes then stop
// trusting their copies of clip details (VideoForKey) before the change
// can be read, and copy them again after.

// commit commits tx with the catalog held across the commit. A commit
// whose outcome is unknown (its connection lost mid-commit: the server may
// land it a moment later) leaves the hold to lapse rather than release it
// before the change can be read (admission.Hold.Settle).
func (s *Service) commit(ctx context.Context, tx pgx.Tx) error {
	if s.admission == nil {
		return database.Commit(ctx, tx)
	}
	h := s.admission.Hold(ctx, admission.Catalog)
	err := database.Commit(ctx, tx)
	h.Settle(ctx, errors.Is(err, database.ErrCommitUnconfirmed))
	return err
}

// inTx runs fn in a transaction that commits through commit.
func (s *Service) inTx(ctx context.Context, fn func(pgx.Tx) error) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if err := fn(tx); err != nil {
		return err
	}
	return s.commit(ctx, tx)
}
