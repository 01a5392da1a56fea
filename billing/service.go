package billing

import (
	"github.com/jackc/pgx/v5/pgxpool"

	"broll/internal/money"
)

// Service is the billing store.
type Service struct {
	pool  *pgxpool.Pool
	links *Signer
	batch *batcher
}

// New returns the billing service over pool; links signs download links
// (nil where no links are handed out, as in the operator CLI).
func New(pool *pgxpool.Pool, links *Signer) *Service {
	return &Service{pool: pool, links: links, batch: newBatcher(pool)}
}

// SetLowBalanceThreshold sets the balance below which an account without a
// threshold of its own gets balance.low (BROLL_LOW_BALANCE_THRESHOLD). Call
// it before the service takes purchases.
func (s *Service) SetLowBalanceThreshold(c money.Cents) { s.batch.lowBalance = c }

// SetTestBalance sets what an account's test balance starts with (and what
// ResetTestBalance restores).
func (s *Service) SetTestBalance(c money.Cents) { s.batch.testBalance = c }
