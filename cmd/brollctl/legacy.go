package main

import (
	"context"

	"github.com/google/uuid"
)

// legacySetEnabled marks an account as a v0 customer or not: the legacy
// routes serve only marked accounts, since their one shared secret is the
// whole service's.
func (c *cli) legacySetEnabled(enabled bool) func(*flags) action {
	return func(f *flags) action {
		source := f.required("source", "the account's source", f.Name()+" needs --source")
		return c.opened(func(ctx context.Context, e *env) (any, error) {
			a, err := e.tenancy.SetLegacyEnabled(ctx, *source, enabled)
			if err != nil {
				return nil, err
			}
			return map[string]any{"account_id": a.Account.ID, "source": a.Account.Source, "legacy_enabled": a.Enabled}, nil
		})
	}
}

// legacyCustomerJSON is one line of the email -> key mapping.
type legacyCustomerJSON struct {
	KeyID uuid.UUID `json:"key_id"`
	// APIKey is shown once, for keys this run created.
	APIKey  string `json:"api_key,omitempty"`
	Created bool   `json:"created"`
	Revoked bool   `json:"revoked,omitempty"`
}

// legacyMigrateCustomers gives each distinct customer_email of an account's
// legacy purchases a customer key labelled with it, and prints the mapping
// the platform stores next to its customers. Safe to run again.
func (c *cli) legacyMigrateCustomers(f *flags) action {
	id := f.id("account")
	return c.opened(func(ctx context.Context, e *env) (any, error) {
		m, err := e.billing.MigrateLegacyCustomers(ctx, *id)
		if err != nil {
			return nil, err
		}
		customers := make(map[string]legacyCustomerJSON, len(m.Customers))
		created := 0
		for _, k := range m.Customers {
			customers[k.Email] = legacyCustomerJSON{KeyID: k.KeyID, APIKey: k.APIKey, Created: k.Created, Revoked: k.Revoked}
			if k.Created {
				created++
			}
		}
		return map[string]any{
			"account_id":  m.AccountID,
			"root_key_id": m.RootKeyID,
			"created":     created,
			"existing":    len(m.Customers) - created,
			"customers":   customers,
		}, nil
	})
}
