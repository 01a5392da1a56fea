package billing

import (
	"context"
	"time"

	"github.com/google/uuid"

	"broll/internal/money"
	"broll/tenancy"
)

// AccountSummary is the balance view of GET /api/v1/balance and get_balance.
type AccountSummary struct {
	AccountID      uuid.UUID
	Balance        money.Cents
	MonthPurchases int
	MonthAmount    money.Cents
}

// visibleSQL is the one definition of which purchases a key sees: a
// customer key its own; a root key all of its account's (its customer keys',
// its own and the legacy ones).
const visibleSQL = `p.account_id = $1 AND ($2::boolean OR p.api_key_id = $3)`

// Summary returns the pool and the month-to-date spend the key can see.
func (s *Service) Summary(ctx context.Context, p tenancy.Principal, now time.Time) (AccountSummary, error) {
	monthStart := time.Date(now.UTC().Year(), now.UTC().Month(), 1, 0, 0, 0, 0, time.UTC)
	out := AccountSummary{AccountID: p.AccountID}
	var balance, amount int64
	err := s.pool.QueryRow(ctx, `
		SELECT a.balance_cents,
		       (SELECT count(*) FROM purchases p WHERE `+visibleSQL+` AND p.purchased_at >= $4),
		       (SELECT coalesce(sum(p.price_cents), 0) FROM purchases p WHERE `+visibleSQL+` AND p.purchased_at >= $4)
		FROM accounts a WHERE a.id = $1`,
		p.AccountID, p.Kind == tenancy.KindRoot, p.KeyID, monthStart).Scan(&balance, &out.MonthPurchases, &amount)
	out.Balance, out.MonthAmount = money.Cents(balance), money.Cents(amount)
	return out, err
}
