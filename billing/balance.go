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
	f.Where("p.purchased_at >= " + f.Arg(monthStart))
	acct := f.Arg(p.AccountID)
	balance := liveBalanceSQL
	if p.Test {
		balance = testBalanceOrSQL(f.Arg(int64(s.batch.testBalance)))
	}
	out := AccountSummary{AccountID: p.AccountID, Livemode: !p.Test}
	err := s.pool.QueryRow(ctx, summarySQL(balance, f.And(), acct), f.Args()...).
		Scan(&out.Balance, &out.MonthPurchases, &out.MonthAmount)
	return out, err
}
