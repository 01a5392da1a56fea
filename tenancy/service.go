package tenancy

import (
	"github.com/jackc/pgx/v5/pgxpool"

	"broll/internal/displayname"
)

// Service is the tenancy store.
type Service struct {
	pool *pgxpool.Pool
	// keyCreated runs after this service issued a key (the
	// authenticator's KeyCreated); nil does nothing.
	keyCreated func()
	// hashing bounds the password hashes computed at once.
	hashing hashSlots
	// names checks the names third parties read (licensee names).
	names displayname.Rule
}

// ServiceOptions are what a tenancy service may be given beyond its
// database; the zero value is usable.
type ServiceOptions struct {
	// PasswordHashing is how many password hashes this process computes at
	// once (BROLL_PASSWORD_HASH_CONCURRENCY; 0: GOMAXPROCS).
	PasswordHashing int
	// OnKeyCreated runs after the service issued a key: the
	// authenticator's KeyCreated, so that a key issued on this node is
	// never refused from its negative cache. nil does nothing.
	OnKeyCreated func()
	// Names is the rule for the names a third party reads; with a Printer
	// (the certificate's fonts) a licensee name that could not be printed
	// is refused.
	Names displayname.Rule
}

// New returns the tenancy service over pool, as o says.
func New(pool *pgxpool.Pool, o ServiceOptions) *Service {
	return &Service{pool: pool, keyCreated: o.OnKeyCreated, hashing: newHashSlots(o.PasswordHashing), names: o.Names}
}

func (s *Service) issued(k IssuedKey, err error) (IssuedKey, error) {
	if err == nil && s.keyCreated != nil {
		s.keyCreated()
	}
	return k, err
}
