package tenancy

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"broll/internal/admission"
	"broll/internal/apperr"
	"broll/internal/database"
)

// Principal is who a request acts as: the key, its account and its root.
type Principal struct {
	KeyID     uuid.UUID
	AccountID uuid.UUID // zero for ops keys
	RootKeyID uuid.UUID // the key itself for a root key, its parent for a customer key
	Kind      Kind
	Label     string
	Scopes    []Scope
	// RateLimitPerMinute overrides the global limit when above zero.
	RateLimitPerMinute int
	// SettingsVersion is the key's settings_version when it was read: a
	// newer change marker in Redis makes the principal stale (admission.Gate.Admit).
	SettingsVersion int64
	// Test is a test-mode key's: its purchases are paid from the test
	// balance and it sees test purchases only. The zero value is live.
	Test bool
}

// Caller is what the admission needs of the principal.
func (p Principal) Caller() admission.Caller {
	return admission.Caller{KeyID: p.KeyID, RootKeyID: p.RootKeyID, RateLimitPerMinute: p.RateLimitPerMinute,
		SettingsVersion: p.SettingsVersion}
}

// Has reports whether the principal holds scope s.
func (p Principal) Has(s Scope) bool { return slices.Contains(p.Scopes, s) }

// Authenticator turns a bearer key into a principal. Lookups are cached in
// process for a short time; that is safe because every request also checks
// the Redis revocation markers (see admission.Gate), so a cached entry
// never outlives a revocation, and because the whole cache is dropped when Redis is seen
// to have lost its data (markers included). Unknown keys are remembered
// briefly too (unknownKeys).
type Authenticator struct {
	pool *pgxpool.Pool
	ttl  time.Duration
	now  func() time.Time

	mu      sync.Mutex
	cache   map[string]cachedPrincipal
	unknown unknownKeys
	// generation counts Drop calls: a lookup that started before a drop
	// does not fill the cache after it, and a request whose principal was
	// read before a drop checks it again (Generation).
	generation uint64
}

type cachedPrincipal struct {
	p       Principal
	expires time.Time
}

const maxCachedKeys = 100_000

// AuthenticatorOptions tune an Authenticator.
type AuthenticatorOptions struct {
	// CacheTTL is how long the in-process cache keeps a key
	// (BROLL_AUTH_CACHE_TTL); 0 disables the cache.
	CacheTTL time.Duration
}

// NewAuthenticator returns an authenticator of the keys in pool.
func NewAuthenticator(pool *pgxpool.Pool, o AuthenticatorOptions) *Authenticator {
	ttl := o.CacheTTL
	return &Authenticator{pool: pool, ttl: ttl, now: time.Now, cache: map[string]cachedPrincipal{}, unknown: newUnknownKeys(ttl)}
}

var errUnauthorized = apperr.New(apperr.Unauthorized, "missing, malformed, unknown or revoked API key")

// Authenticate resolves a key. useCache=false forces a database lookup
// (used while the revocation markers in Redis cannot be checked).
func (a *Authenticator) Authenticate(ctx context.Context, key string, useCache bool) (Principal, error) {
	if !wellFormed(key) {
		return Principal{}, errUnauthorized
	}
	h := string(hashKey(key))
	now := a.now()
	a.mu.Lock()
	gen := a.generation
	c, cached := a.cache[h]
	unknown := a.unknown.has(h, now)
	a.mu.Unlock()
	if useCache && a.ttl > 0 {
		if cached && now.Before(c.expires) {
			return c.p, nil
		}
		if unknown {
			return Principal{}, errUnauthorized
		}
	}
	p, err := a.lookup(ctx, []byte(h))
	if err != nil {
		if errors.Is(err, errUnauthorized) && a.ttl > 0 {
			a.mu.Lock()
			if a.generation == gen {
				a.unknown.add(h, a.now())
			}
			a.mu.Unlock()
		}
		return Principal{}, err
	}
	if a.ttl > 0 {
		a.mu.Lock()
		if a.generation == gen {
			if len(a.cache) >= maxCachedKeys {
				clear(a.cache)
			}
			a.cache[h] = cachedPrincipal{p: p, expires: a.now().Add(a.ttl)}
		}
		a.mu.Unlock()
	}
	return p, nil
}

// Generation changes whenever the caches are dropped. A caller that read
// it before Authenticate and sees another value after the revocation check
// must not trust a cached principal (it may predate lost markers).
func (a *Authenticator) Generation() uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.generation
}

// Drop forgets every cached key, known and unknown: Redis lost its data,
// revocation markers included, so only Postgres can be believed until the
// cache is filled again from it.
func (a *Authenticator) Drop() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.generation++
	clear(a.cache)
	a.unknown.clear()
}

// KeyCreated clears the negative cache: a key created on this node must
// not be refused as unknown because a request guessed it first.
func (a *Authenticator) KeyCreated() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.unknown.clear()
}

// Forget drops cached entries of the given keys (revocation on this node).
func (a *Authenticator) Forget(ids ...uuid.UUID) {
	a.mu.Lock()
	defer a.mu.Unlock()
	maps.DeleteFunc(a.cache, func(_ string, c cachedPrincipal) bool {
		return slices.Contains(ids, c.p.KeyID) || slices.Contains(ids, c.p.RootKeyID)
	})
}

func (a *Authenticator) lookup(ctx context.Context, hash []byte) (Principal, error) {
	var p Principal
	var account uuid.NullUUID
	err := a.pool.QueryRow(ctx, lookupSQL, hash).
		Scan(&p.KeyID, &account, &p.Kind, &p.RootKeyID, &p.Label, &p.Scopes, &p.RateLimitPerMinute,
			&p.SettingsVersion, &p.Test)
	if database.NoRows(err) {
		return Principal{}, errUnauthorized
	}
	if err != nil {
		return Principal{}, err
	}
	p.AccountID = account.UUID
	return p, nil
}
