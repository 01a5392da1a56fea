package billing

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"broll/internal/database"
	"broll/internal/money"
)

// LedgerEntry is one movement of an account's credit with the balance it
// left behind.
type LedgerEntry struct {
	ID        int64
	CreatedAt time.Time
	// Kind is topup, purchase, adjustment or refund.
	Kind    string
	Amount  money.Cents // positive adds credit, negative spends it
	Balance money.Cents // the pool right after this entry
	Note    string
	// For purchases: what was bought and with which key.
	PurchaseID *uuid.UUID
	APIKeyID   *uuid.UUID
	KeyLabel   string
	VideoTitle string
}

// LedgerPage is a page of an account's ledger, newest first.
type LedgerPage struct {
	Entries       []LedgerEntry
	Total         int
	Limit, Offset int
}

// Ledger returns one page of an account's live ledger (test: its test
// ledger), newest first, each entry with the balance after it.
func (s *Service) Ledger(ctx context.Context, accountID uuid.UUID, test bool, limit, offset int) (LedgerPage, error) {
	out := LedgerPage{Limit: limit, Offset: offset}
	var err error
	out.Entries, err = database.Select(ctx, s.pool, func(r pgx.CollectableRow) (LedgerEntry, error) {
		var e LedgerEntry
		return e, r.Scan(&e.ID, &e.CreatedAt, &e.Kind, &e.Amount, &e.Balance, &e.Note, &e.PurchaseID,
			&e.APIKeyID, &e.KeyLabel, &e.VideoTitle, &out.Total)
	}, ledgerPageSQL, accountID, limit, offset, !test)
	if err != nil {
		return out, fmt.Errorf("ledger: %w", err)
	}
	if len(out.Entries) == 0 && offset > 0 {
		// Past the end: the count still tells the page links where to go.
		if err := s.pool.QueryRow(ctx, ledgerCountSQL, accountID, !test).Scan(&out.Total); err != nil {
			return out, fmt.Errorf("ledger: %w", err)
		}
	}
	return out, nil
}
