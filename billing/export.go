package billing

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"broll/internal/apperr"
	"broll/internal/database"
	"broll/tenancy"
)

// ExportPurchases calls fn with every purchase of the listing q, oldest
// first, as rows arrive (no page, no download links), for exports of any
// size. Semantic search ranks rather than filters, so it has no export.
func (s *Service) ExportPurchases(ctx context.Context, p tenancy.Principal, q ListQuery, fn func(PurchaseRecord) error) error {
	if q.SemanticSearch != "" {
		return apperr.InvalidField("semantic_search", "semantic_search cannot be exported; use search or the other filters")
	}
	if q.KeyID != nil {
		if err := s.checkKeyFilter(ctx, p, *q.KeyID); err != nil {
			return err
		}
	}
	f := q.filter(p)
	// One statement streams the whole export to a client that may read
	// slowly: it gets ExportStatementTimeout instead of the pool's short
	// one. The caller's context still bounds it.
	return database.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		if err := database.SetLocalStatementTimeout(ctx, tx, ExportStatementTimeout); err != nil {
			return fmt.Errorf("export purchases: %w", err)
		}
		rows, err := tx.Query(ctx, exportSQL(purchaseFromSQL(f.And())), f.Args()...)
		if err != nil {
			return fmt.Errorf("export purchases: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			r, err := scanRecord(rows, nil)
			if err != nil {
				return fmt.Errorf("export purchases: %w", err)
			}
			if err := fn(r); err != nil {
				return err
			}
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("export purchases: %w", err)
		}
		return nil
	})
}

// ExportStatementTimeout bounds the one statement of an export.
const ExportStatementTimeout = 10 * time.Minute
