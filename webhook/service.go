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

// New returns the endpoint service; allow is BROLL_WEBHOOK_ALLOW_HOSTS,
// sealer seals the signing secrets it makes (the worker opens them).
func New(pool *pgxpool.Pool, allow Allow, sealer *seal.Sealer) *Service {
	return &Service{pool: pool, allow: allow, sealer: sealer}
}
