package billing

import (
	"context"
	"fmt"

	"broll/internal/apperr"
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
	rows, err := s.pool.Query(ctx, `SELECT `+recordColumns+f.from()+` ORDER BY p.purchased_at, p.id`, f.args...)
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
}
