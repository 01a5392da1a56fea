package tenancy

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"broll/internal/apperr"
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
}

// Has reports whether the principal holds scope s.
func (p Principal) Has(s Scope) bool { return slices.Contains(p.Scopes, s) }

// Authenticator turns a bearer key into a principal. Lookups are cached in
// process for a short time; that is safe because every request also checks
// the Redis revocation markers (see Gate), so a cached entry never outlives
// a revocation.
type Authenticator struct {
	pool *pgxpool.Pool
	ttl  time.Duration
	now  func() time.Time

	mu    sync.Mutex
	cache map[string]cachedPrincipal
}

type cachedPrincipal struct {
	p       Principal
	expires time.Time
}

const maxCachedKeys = 100_000

// NewAuthenticator returns an authenticator with an in-process cache of ttl
// (0 disables the cache).
func NewAuthenticator(pool *pgxpool.Pool, ttl time.Duration) *Authenticator {
	return &Authenticator{pool: pool, ttl: ttl, now: time.Now, cache: map[string]cachedPrincipal{}}
}

var errUnauthorized = apperr.New(apperr.Unauthorized, "missing, malformed, unknown or revoked API key")

// Authenticate resolves a key. useCache=false forces a database lookup
// (used while the revocation markers in Redis cannot be checked).
func (a *Authenticator) Authenticate(ctx context.Context, key string, useCache bool) (Principal, error) {
	if !wellFormed(key) {
		return Principal{}, errUnauthorized
	}
	h := string(hashKey(key))
	if useCache && a.ttl > 0 {
		a.mu.Lock()
		c, ok := a.cache[h]
		a.mu.Unlock()
		if ok && a.now().Before(c.expires) {
			return c.p, nil
		}
	}
	p, err := a.lookup(ctx, []byte(h))
	if err != nil {
		return Principal{}, err
	}
	if a.ttl > 0 {
		a.mu.Lock()
		if len(a.cache) >= maxCachedKeys {
			clear(a.cache)
		}
		a.cache[h] = cachedPrincipal{p: p, expires: a.now().Add(a.ttl)}
		a.mu.Unlock()
	}
	return p, nil
}

// Forget drops cached entries of the given keys (revocation on this node).
func (a *Authenticator) Forget(ids ...uuid.UUID) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for h, c := range a.cache {
		for _, id := range ids {
			if c.p.KeyID == id || c.p.RootKeyID == id {
				delete(a.cache, h)
			}
		}
	}
}

const lookupSQL = `
	SELECT k.id, k.account_id, k.kind, coalesce(k.parent_id, k.id), k.label, k.scopes,
	       coalesce(k.rate_limit_per_minute, 0)
	FROM api_keys k
	LEFT JOIN api_keys p ON p.id = k.parent_id
	WHERE k.key_hash = $1 AND k.revoked_at IS NULL AND p.revoked_at IS NULL`

func (a *Authenticator) lookup(ctx context.Context, hash []byte) (Principal, error) {
	var p Principal
	var account uuid.NullUUID
	var scopes []string
	err := a.pool.QueryRow(ctx, lookupSQL, hash).
		Scan(&p.KeyID, &account, &p.Kind, &p.RootKeyID, &p.Label, &scopes, &p.RateLimitPerMinute)
	if err == pgx.ErrNoRows {
		return Principal{}, errUnauthorized
	}
	if err != nil {
		return Principal{}, err
	}
	p.AccountID = account.UUID
	p.Scopes = toScopes(scopes)
	return p, nil
}
