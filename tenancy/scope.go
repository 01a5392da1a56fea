package tenancy

import (
	"slices"

	"broll/internal/apperr"
)

// Scope is a permission carried by a key.
type Scope string

// The scopes customer keys carry, plus catalog:write for content-ops keys.
const (
	ScopeBrollRead        Scope = "broll:read"
	ScopeBrollPurchase    Scope = "broll:purchase"
	ScopeBrollBilling     Scope = "broll:billing"
	ScopeKeysManage       Scope = "keys:manage"
	ScopeOrdersRead       Scope = "orders:read"
	ScopeOrdersWrite      Scope = "orders:write"
	ScopePricingRead      Scope = "pricing:read"
	ScopeDeliverablesRead Scope = "deliverables:read"
	ScopeCatalogWrite     Scope = "catalog:write"
	// ScopeWebhooksManage manages the account's webhook endpoints; root
	// keys only, never granted to customer keys.
	ScopeWebhooksManage Scope = "webhooks:manage"
)

// RootScopes are held by every root key.
var rootScopes = []Scope{
	ScopeBrollRead, ScopeBrollPurchase, ScopeBrollBilling, ScopeKeysManage,
	ScopeOrdersRead, ScopeOrdersWrite, ScopePricingRead, ScopeDeliverablesRead, ScopeWebhooksManage,
}

// RootScopes returns the scopes of a root key.
func RootScopes() []Scope { return slices.Clone(rootScopes) }

// CustomerScopes returns the default scopes of a customer key: all but the
// root key's management scopes.
func CustomerScopes() []Scope {
	out := make([]Scope, 0, len(rootScopes))
	for _, s := range rootScopes {
		if s != ScopeKeysManage && s != ScopeWebhooksManage {
			out = append(out, s)
		}
	}
	return out
}

// OpsScopes returns the scopes of a content-operations key.
func OpsScopes() []Scope { return []Scope{ScopeCatalogWrite} }

// ParseCustomerScopes validates a requested subset of the customer scopes.
// An empty request means all customer scopes.
func ParseCustomerScopes(requested []string) ([]Scope, error) {
	allowed := CustomerScopes()
	if len(requested) == 0 {
		return allowed, nil
	}
	seen := map[Scope]bool{}
	out := make([]Scope, 0, len(requested))
	for _, r := range requested {
		s := Scope(r)
		if !slices.Contains(allowed, s) {
			names := scopeStrings(allowed)
			return nil, apperr.InvalidField("scopes", "unknown or not grantable scope %q; allowed: %v", apperr.Clip(r), names).
				With("allowed_values", names)
		}
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out, nil
}

func scopeStrings(ss []Scope) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = string(s)
	}
	return out
}
