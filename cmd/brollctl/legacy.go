package main

import (
	"context"
	"flag"

	"github.com/google/uuid"
)

// legacySetEnabled marks an account as a v0 customer or not: the legacy
// routes serve only marked accounts, since their one shared secret is the
// whole service's.
func (c *cli) legacySetEnabled(ctx context.Context, args []string, enabled bool) (any, error) {
	name := "legacy disable"
	if enabled {
		name = "legacy enable"
	}
	var source string
	if _, err := c.flags(name, args, 0, func(fs *flag.FlagSet) {
		fs.StringVar(&source, "source", "", "the account's source")
	}); err != nil {
		return nil, err
	}
	if source == "" {
		return nil, usageErr("%s needs --source", name)
	}
	return c.with(ctx, func(e *env) (any, error) {
		a, err := e.tenancy.SetLegacyEnabled(ctx, source, enabled)
		if err != nil {
			return nil, err
		}
		return map[string]any{"account_id": a.Account.ID, "source": a.Account.Source, "legacy_enabled": a.Enabled}, nil
	})
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
func (c *cli) legacyMigrateCustomers(ctx context.Context, args []string) (any, error) {
	id, err := c.idFlags("legacy migrate-customers", args, "account", func(*flag.FlagSet) {})
	if err != nil {
		return nil, err
	}
	return c.with(ctx, func(e *env) (any, error) {
		m, err := e.billing.MigrateLegacyCustomers(ctx, id)
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
