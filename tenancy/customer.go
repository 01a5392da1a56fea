package tenancy

import (
	"context"

	"github.com/google/uuid"

	"broll/internal/apperr"
	"broll/internal/database"
)

// CustomerKeySpec is what a new customer key is made with.
type CustomerKeySpec struct {
	Label      string
	Scopes     []string
	SpendLimit *SpendLimit // nil: no limit
	RateLimit  *int        // nil: the service default
	Test       bool        // a test-mode key (dsk_test_)
	// LicenseeName is printed on the key's licences (nil: none).
	LicenseeName *string
}

// CreateCustomerKey issues a key for one end customer under the calling
// root key. Its scopes are the requested subset of the customer scopes (all
// of them by default) and never more than the root holds.
func (s *Service) CreateCustomerKey(ctx context.Context, root Principal, label string, scopes []string) (IssuedKey, error) {
	return s.CreateCustomerKeyWith(ctx, root, CustomerKeySpec{Label: label, Scopes: scopes})
}

// CreateCustomerKeyWith is CreateCustomerKey with a spend limit and a rate
// limit of the key's own.
func (s *Service) CreateCustomerKeyWith(ctx context.Context, root Principal, spec CustomerKeySpec) (IssuedKey, error) {
	if root.Kind != KindRoot {
		return IssuedKey{}, apperr.New(apperr.Forbidden, "only a root key can create customer keys")
	}
	label, err := NormalizeLabel("customer_label", spec.Label, true)
	if err != nil {
		return IssuedKey{}, err
	}
	granted, err := ParseCustomerScopes(spec.Scopes)
	if err != nil {
		return IssuedKey{}, err
	}
	for _, sc := range granted {
		if !root.Has(sc) {
			return IssuedKey{}, apperr.InvalidField("scopes", "the root key does not hold scope %q", sc)
		}
	}
	if err := CheckRateLimit(spec.RateLimit); err != nil {
		return IssuedKey{}, err
	}
	licensee, err := s.licenseeName(spec.LicenseeName)
	if err != nil {
		return IssuedKey{}, err
	}
	return s.issued(insertKey(ctx, s.pool, Key{
		AccountID:          uuid.NullUUID{UUID: root.AccountID, Valid: true},
		Kind:               KindCustomer,
		ParentID:           uuid.NullUUID{UUID: root.KeyID, Valid: true},
		Label:              label,
		Scopes:             granted,
		SpendLimit:         spec.SpendLimit,
		RateLimitPerMinute: spec.RateLimit,
		Test:               spec.Test,
		LicenseeName:       licensee,
	}))
}

// AccountKey returns a key of the account (root or customer), or not_found:
// another account's key is indistinguishable from an unknown one.
func (s *Service) AccountKey(ctx context.Context, accountID, id uuid.UUID) (Key, error) {
	k, err := scanKey(s.pool.QueryRow(ctx, accountKeySQL, id, accountID))
	return k, database.Interpret(err, "key not found")
}
