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

// Summary returns the pool and the month-to-date spend over the purchases
// the key can see (visibleTo): the shared pool is the account's, the month
// to date is the key's view of it.
func (s *Service) Summary(ctx context.Context, p tenancy.Principal, now time.Time) (AccountSummary, error) {
	monthStart := time.Date(now.UTC().Year(), now.UTC().Month(), 1, 0, 0, 0, 0, time.UTC)
	f := visibleTo(p)
	f.where = append(f.where, "p.purchased_at >= "+f.arg(monthStart))
	acct := f.arg(p.AccountID)
	out := AccountSummary{AccountID: p.AccountID}
	var balance, amount int64
	err := s.pool.QueryRow(ctx, `
		SELECT a.balance_cents, m.n, m.amount
		FROM accounts a,
		     (SELECT count(*) AS n, coalesce(sum(p.price_cents), 0)::bigint AS amount
		      FROM purchases p WHERE `+f.and()+`) m
		WHERE a.id = `+acct, f.args...).Scan(&balance, &out.MonthPurchases, &amount)
	out.Balance, out.MonthAmount = money.Cents(balance), money.Cents(amount)
	return out, err
}
