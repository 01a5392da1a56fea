package tenancy

import (
	"context"
	"time"

	"github.com/google/uuid"

	"broll/internal/apperr"
	"broll/internal/database"
	"broll/internal/money"
)

// SpendPeriod is the window a spend limit counts over: a UTC day, a UTC
// calendar month, or the key's whole life.
type SpendPeriod string

// Spend periods.
const (
	SpendDay   SpendPeriod = "day"
	SpendMonth SpendPeriod = "month"
	SpendTotal SpendPeriod = "total"
)

// SpendLimit caps what one key may be charged in a period. The purchase
// statement enforces it (migrations/functions/purchase_batch.sql).
type SpendLimit struct {
	Amount money.Cents
	Period SpendPeriod
}

// columns are the limit as api_keys stores it: both NULL for no limit.
func (l *SpendLimit) columns() (*int64, *string) {
	if l == nil {
		return nil, nil
	}
	c, p := int64(l.Amount), string(l.Period)
	return &c, &p
}

// Spent is what a key was charged in the period of its limit ('total'
// when it has none). ResetsAt is nil for 'total', which never resets.
type Spent struct {
	Amount      money.Cents
	PeriodStart *time.Time
	ResetsAt    *time.Time
}

// MaxRateLimitPerMinute bounds a per-key rate limit.
const MaxRateLimitPerMinute = 100_000

// ParseSpendLimit validates a limit given in dollars and a period name.
func ParseSpendLimit(amount money.Cents, period string) (SpendLimit, error) {
	switch p := SpendPeriod(period); p {
	case SpendDay, SpendMonth, SpendTotal:
		if amount < 0 {
			return SpendLimit{}, apperr.InvalidField("spend_limit.amount", "spend_limit.amount must not be negative")
		}
		return SpendLimit{Amount: amount, Period: p}, nil
	}
	return SpendLimit{}, apperr.InvalidField("spend_limit.period", "spend_limit.period must be day, month or total, got %q", apperr.Clip(period)).
		With("allowed_values", []string{string(SpendDay), string(SpendMonth), string(SpendTotal)})
}

// CheckRateLimit validates a per-key rate limit (nil: the service default).
func CheckRateLimit(n *int) error {
	if n != nil && (*n < 1 || *n > MaxRateLimitPerMinute) {
		return apperr.InvalidField("rate_limit_per_minute", "rate_limit_per_minute must be 1 to %d, or null for the service default", MaxRateLimitPerMinute)
	}
	return nil
}

// KeyUpdate is a PATCH of a customer key: only the Set fields change; a
// Set field with a nil value clears the setting.
type KeyUpdate struct {
	Label         *string
	SpendLimitSet bool
	SpendLimit    *SpendLimit
	RateLimitSet  bool
	RateLimit     *int
	// LicenseeNameSet changes the name printed on the key's licences (to
	// none when LicenseeName is nil); licences show the current name.
	LicenseeNameSet bool
	LicenseeName    *string
}

// updateKey changes a customer key, of the account and root given (if).
// Every change bumps the key's settings version, which KeyChanges.Update
// publishes so that every node drops its cached copy of the key.
func (s *Service) updateKey(ctx context.Context, id uuid.UUID, account, root uuid.NullUUID, u KeyUpdate) (Key, error) {
	var label *string
	if u.Label != nil {
		l, err := NormalizeLabel("customer_label", *u.Label, true)
		if err != nil {
			return Key{}, err
		}
		label = &l
	}
	if err := CheckRateLimit(u.RateLimit); err != nil {
		return Key{}, err
	}
	licensee, err := s.licenseeName(u.LicenseeName)
	if err != nil {
		return Key{}, err
	}
	limitCents, limitPeriod := u.SpendLimit.columns()
	k, err := scanKey(s.pool.QueryRow(ctx, updateKeySQL, id, account, root, label, u.SpendLimitSet, limitCents, limitPeriod,
		u.RateLimitSet, u.RateLimit, u.LicenseeNameSet, licensee))
	return k, database.Interpret(err, "key not found")
}
