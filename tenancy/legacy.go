package tenancy

import (
	"context"

	"broll/internal/database"
)

// errUnknownSource is the one answer for a source the v0 API does not
// serve, whether no account has it or its account is not a v0 customer: the
// shared secret must not tell anyone which sources exist.
const errUnknownSource = "unknown source"

// LegacyAccount returns the account a v0 `source` names, if the account is
// marked as a v0 customer (SetLegacyEnabled); any other source is the same
// not found as one no account has.
func (s *Service) LegacyAccount(ctx context.Context, source string) (Account, error) {
	var a Account
	err := s.pool.QueryRow(ctx, legacyAccountSQL, source).Scan(a.dest()...)
	return a, database.Interpret(err, errUnknownSource)
}

// LegacyAccess is an account's v0 switch as brollctl prints it.
type LegacyAccess struct {
	Account Account
	Enabled bool
}

// SetLegacyEnabled marks the account of source as a v0 customer (enabled)
// or not. Idempotent; an unknown source is not found.
func (s *Service) SetLegacyEnabled(ctx context.Context, source string, enabled bool) (LegacyAccess, error) {
	var out LegacyAccess
	err := s.pool.QueryRow(ctx, setLegacyEnabledSQL, source, enabled).
		Scan(append(out.Account.dest(), &out.Enabled)...)
	return out, database.Interpret(err, errUnknownSource)
}
