package webhook

import "github.com/jackc/pgx/v5/pgxpool"

// Service manages an account's endpoints. Every call is scoped by account.
type Service struct {
	pool  *pgxpool.Pool
	allow Allow
}

// New returns the endpoint service; allow is BROLL_WEBHOOK_ALLOW_HOSTS.
func New(pool *pgxpool.Pool, allow Allow) *Service { return &Service{pool: pool, allow: allow} }
