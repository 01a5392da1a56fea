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
	Balance        money.Cents // the live pool, or for a test principal the test balance
	Livemode       bool
	MonthPurchases int
	MonthAmount    money.Cents
}

// Summary returns the pool and the month-to-date spend over the purchases
// the key can see (visibleTo): the shared pool is the account's, the month
// to date is the key's view of it. A test principal sees the test balance
// (what it will start with, before its first purchase).
func (s *Service) Summary(ctx context.Context, p tenancy.Principal, now time.Time) (AccountSummary, error) {
	monthStart := time.Date(now.UTC().Year(), now.UTC().Month(), 1, 0, 0, 0, 0, time.UTC)
	f := visibleTo(p)
	f.where = append(f.where, "p.purchased_at >= "+f.arg(monthStart))
	acct := f.arg(p.AccountID)
	balanceSQL := `a.balance_cents`
	if p.Test {
		balanceSQL = `coalesce((SELECT t.balance_cents FROM test_balances t WHERE t.account_id = a.id), ` +
			f.arg(int64(s.batch.testBalance)) + `)`
	}
	out := AccountSummary{AccountID: p.AccountID, Livemode: !p.Test}
	err := s.pool.QueryRow(ctx, `
		SELECT `+balanceSQL+`, m.n, m.amount
		FROM accounts a,
		     (SELECT count(*) AS n, coalesce(sum(p.price_cents), 0)::bigint AS amount
		      FROM purchases p WHERE `+f.and()+`) m
		WHERE a.id = `+acct, f.args...).Scan(&out.Balance, &out.MonthPurchases, &out.MonthAmount)
	return out, err
}
