package webhook

import (
	"github.com/jackc/pgx/v5/pgxpool"

	"broll/internal/seal"
)

// Service manages endpoints. Every call is scoped by an Owner: an account
// and one of its root keys, or the account's owners.
type Service struct {
	pool   *pgxpool.Pool
	allow  Allow
	sealer *seal.Sealer
}

// ServiceOptions tune the endpoint service.
type ServiceOptions struct {
	// Allow is BROLL_WEBHOOK_ALLOW_HOSTS: the hosts and ranges an endpoint
	// may point at though not public; zero: public addresses only.
	Allow Allow
}

// New returns the endpoint service; sealer seals the signing secrets it
// makes (the worker opens them).
func New(pool *pgxpool.Pool, sealer *seal.Sealer, o ServiceOptions) *Service {
	return &Service{pool: pool, allow: o.Allow, sealer: sealer}
}
