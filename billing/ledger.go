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

// ledgerPageSQL reads one page with the running balance. The ledger sums to
// the pool at every commit, so the balance after an entry is the pool now
// minus every newer entry: the entries of the pages before this one ($3
// newest) and those above it on this page. That costs the rows up to the
// page, not a pass over the whole ledger, and the one statement reads the
// pool and the entries in one snapshot. $4 picks the live ledger and pool
// or the test ones (the test balance's own row), which sum alike.
const ledgerPageSQL = `
	WITH newer AS (
		SELECT coalesce(sum(amount_cents), 0) AS amount FROM (
			SELECT amount_cents FROM ledger WHERE account_id = $1 AND livemode = $4
			ORDER BY created_at DESC, id DESC LIMIT $3) x
	), page AS (
		SELECT l.id, l.created_at, l.kind, l.amount_cents, l.note, l.purchase_id, l.api_key_id
		FROM ledger l WHERE l.account_id = $1 AND l.livemode = $4
		ORDER BY l.created_at DESC, l.id DESC LIMIT $2 OFFSET $3
	), pool AS (
		SELECT balance_cents FROM accounts WHERE id = $1 AND $4
		UNION ALL
		SELECT coalesce((SELECT balance_cents FROM test_balances WHERE account_id = $1), 0) WHERE NOT $4
	)
	SELECT pg.id, pg.created_at, pg.kind, pg.amount_cents,
	       a.balance_cents - n.amount - coalesce(sum(pg.amount_cents) OVER (
	           ORDER BY pg.created_at DESC, pg.id DESC ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0),
	       pg.note, pg.purchase_id, pg.api_key_id, coalesce(k.label, ''), coalesce(v.title, ''),
	       (SELECT count(*) FROM ledger WHERE account_id = $1 AND livemode = $4)
	FROM page pg
	CROSS JOIN newer n
	CROSS JOIN pool a
	LEFT JOIN api_keys k ON k.id = pg.api_key_id
	LEFT JOIN purchases p ON p.id = pg.purchase_id
	LEFT JOIN videos v ON v.id = p.video_id
	ORDER BY pg.created_at DESC, pg.id DESC`

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
		if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM ledger WHERE account_id = $1 AND livemode = $2`,
			accountID, !test).Scan(&out.Total); err != nil {
			return out, fmt.Errorf("ledger: %w", err)
		}
	}
	return out, nil
}
