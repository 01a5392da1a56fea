package billing

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"broll/internal/apperr"
	"broll/internal/database"
	"broll/tenancy"
)

// LegacyCustomerKey is the v1 customer key of one former v0 customer_email.
type LegacyCustomerKey struct {
	Email string
	KeyID uuid.UUID
	// APIKey is the new key's secret, shown once: set only when this run
	// created the key.
	APIKey  string
	Created bool
	// Revoked marks an existing key that was revoked. It is left so: a
	// customer cut off on purpose is not given access again by a re-run.
	Revoked bool
}

// LegacyMigration is the outcome of MigrateLegacyCustomers.
type LegacyMigration struct {
	AccountID uuid.UUID
	RootKeyID uuid.UUID
	Customers []LegacyCustomerKey
}

// MigrateLegacyCustomers gives every distinct customer_email of an
// account's legacy purchases a customer key labelled with that email, under
// the account's oldest live root key: the "one key per end customer" v1
// asks for. It is idempotent: an email that already has a customer key with
// that label keeps it and gets no new one. Runs for one account are
// serialised, so concurrent runs cannot create two keys for one email.
func (s *Service) MigrateLegacyCustomers(ctx context.Context, accountID uuid.UUID) (LegacyMigration, error) {
	out := LegacyMigration{AccountID: accountID}
	if _, err := currentBalance(ctx, s.pool, accountID); err != nil {
		return out, err
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return out, err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, legacyMigrateLockSQL, accountID); err != nil {
		return out, fmt.Errorf("lock legacy migration: %w", err)
	}
	defer func() { _, _ = conn.Exec(context.WithoutCancel(ctx), legacyMigrateUnlockSQL, accountID) }()

	if err := s.pool.QueryRow(ctx, legacyRootKeySQL, accountID).Scan(&out.RootKeyID); err != nil {
		if database.NoRows(err) {
			return out, apperr.NotFoundf("the account has no live root key to hold customer keys; create one with `brollctl key create-root`")
		}
		return out, err
	}
	rootKey, err := s.keys.GetKey(ctx, out.RootKeyID)
	if err != nil {
		return out, err
	}
	root := tenancy.Principal{KeyID: rootKey.ID, AccountID: accountID, RootKeyID: rootKey.ID,
		Kind: tenancy.KindRoot, Label: rootKey.Label, Scopes: rootKey.Scopes}

	emails, err := database.Select(ctx, s.pool, pgx.RowTo[string], legacyCustomerEmailsSQL, accountID)
	if err != nil {
		return out, err
	}
	existing, err := s.labelledKeys(ctx, accountID, emails)
	if err != nil {
		return out, err
	}
	for _, email := range emails {
		if k, ok := existing[email]; ok {
			out.Customers = append(out.Customers, k)
			continue
		}
		issued, err := s.keys.CreateCustomerKey(ctx, root, email, nil)
		if err != nil {
			return out, fmt.Errorf("customer key for %s: %w", email, err)
		}
		out.Customers = append(out.Customers, LegacyCustomerKey{Email: email, KeyID: issued.ID, APIKey: issued.Secret, Created: true})
	}
	return out, nil
}

func (s *Service) labelledKeys(ctx context.Context, accountID uuid.UUID, labels []string) (map[string]LegacyCustomerKey, error) {
	keys, err := database.Select(ctx, s.pool, pgx.RowToStructByNameLax[LegacyCustomerKey], legacyLabelledKeysSQL, accountID, labels)
	if err != nil {
		return nil, err
	}
	out := make(map[string]LegacyCustomerKey, len(keys))
	for _, k := range keys {
		out[k.Email] = k
	}
	return out, nil
}
