package tenancy

import "github.com/jackc/pgx/v5/pgxpool"

// Service is the tenancy store.
type Service struct {
	pool *pgxpool.Pool
	// keyCreated runs after this service issued a key (the
	// authenticator's KeyCreated); nil does nothing.
	keyCreated func()
	// hashing bounds the password hashes computed at once.
	hashing hashSlots
}

// New returns the tenancy service over pool.
func New(pool *pgxpool.Pool) *Service { return &Service{pool: pool, hashing: newHashSlots(0)} }

// LimitPasswordHashing sets how many password hashes this process computes
// at once (0: GOMAXPROCS). Set it before serving.
func (s *Service) LimitPasswordHashing(n int) { s.hashing = newHashSlots(n) }

// OnKeyCreated sets what runs after this service issues a key. Set it
// before serving.
func (s *Service) OnKeyCreated(f func()) { s.keyCreated = f }

func (s *Service) issued(k IssuedKey, err error) (IssuedKey, error) {
	if err == nil && s.keyCreated != nil {
		s.keyCreated()
	}
	return k, err
}
