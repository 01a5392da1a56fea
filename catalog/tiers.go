package catalog

import (
	"context"
	"fmt"
	"regexp"

	"github.com/jackc/pgx/v5"

	"broll/internal/apperr"
	"broll/internal/database"
	"broll/internal/money"
)

// Tier is a difficulty tier: the price of every clip filed under it.
type Tier struct {
	Name       string      `json:"name"`
	PriceCents money.Cents `json:"price"`
}

// tierName mirrors the CHECK on tiers.name so that a bad name is reported
// as the operator's mistake instead of a constraint violation.
var tierName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)

// ListTiers returns every tier, cheapest first.
func (s *Service) ListTiers(ctx context.Context) ([]Tier, error) {
	tiers, err := database.Select(ctx, s.pool, pgx.RowToStructByName[Tier], sqlListTiers)
	if err != nil {
		return nil, fmt.Errorf("list tiers: %w", err)
	}
	return tiers, nil
}

// SetTier creates a tier or changes its price. Past purchases keep the
// price they paid; only later purchases see the new one.
func (s *Service) SetTier(ctx context.Context, name string, price money.Cents) (Tier, error) {
	if !tierName.MatchString(name) {
		return Tier{}, apperr.InvalidField("name",
			"tier name must be 1-32 characters of a-z, 0-9 and _, starting with a letter")
	}
	if price < 0 || price > money.MaxCents {
		return Tier{}, apperr.InvalidField("price", "price must be between 0 and %s", money.MaxCents)
	}
	var t Tier
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, sqlUpsertTier, name, int64(price))
		if err != nil {
			return err
		}
		// The tier's clips take the new price in this transaction, by the
		// trigger tiers_reprice (migrations/functions/clip_price.sql).
		t, err = pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Tier])
		return err
	})
	if err != nil {
		return Tier{}, fmt.Errorf("set tier: %w", err)
	}
	return t, nil
}
