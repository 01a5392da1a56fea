package billing

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"broll/internal/database"
	"broll/internal/money"
	"broll/tenancy"
)

// DaySpend is what was bought on one UTC day.
type DaySpend struct {
	Day       time.Time
	Purchases int
	Amount    money.Cents
}

// DailySpend returns the purchases p can see on each of the `days` UTC days
// up to and including today, oldest first.
func (s *Service) DailySpend(ctx context.Context, p tenancy.Principal, now time.Time, days int) ([]DaySpend, error) {
	if days < 1 {
		return nil, nil
	}
	u := now.UTC()
	last := time.Date(u.Year(), u.Month(), u.Day(), 0, 0, 0, 0, time.UTC)
	first := last.AddDate(0, 0, -(days - 1))
	f := visibleTo(p)
	firstArg, lastArg := f.Arg(first), f.Arg(last)
	out, err := database.Select(ctx, s.pool, func(r pgx.CollectableRow) (DaySpend, error) {
		var d DaySpend
		err := r.Scan(&d.Day, &d.Purchases, &d.Amount)
		d.Day = d.Day.UTC()
		return d, err
	}, dailySpendSQL(f.And(), firstArg, lastArg), f.Args()...)
	if err != nil {
		return nil, fmt.Errorf("daily spend: %w", err)
	}
	return out, nil
}
