package tenancy

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"broll/internal/apperr"
	"broll/internal/testkit"
)

// lookupCounter counts the key lookups a pool sends to Postgres.
type lookupCounter struct{ n atomic.Int64 }

func (c *lookupCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if d.SQL == lookupSQL {
		c.n.Add(1)
	}
	return ctx
}

func (c *lookupCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// countingAuthenticator is an authenticator over a pool of its own whose
// key lookups are counted.
func countingAuthenticator(t *testing.T, ttl time.Duration) (*Authenticator, *lookupCounter) {
	t.Helper()
	_, url := testkit.NewPool(t)
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	counter := &lookupCounter{}
	cfg.ConnConfig.Tracer = counter
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return NewAuthenticator(pool, AuthenticatorOptions{CacheTTL: ttl}), counter
}

func TestUnknownKeysCostOneQuery(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("repeated unknown key", func(t *testing.T) {
		auth, lookups := countingAuthenticator(t, 30*time.Second)
		key := newKey(false)
		for i := range 50 {
			if _, err := auth.Authenticate(ctx, key, true); apperr.CodeOf(err) != apperr.Unauthorized {
				t.Fatalf("request %d: %v, want unauthorized", i, err)
			}
		}
		if n := lookups.n.Load(); n != 1 {
			t.Fatalf("50 requests with one unknown key made %d lookups, want 1", n)
		}
	})

	t.Run("forgotten when the cache is dropped or a key is created", func(t *testing.T) {
		auth, lookups := countingAuthenticator(t, 30*time.Second)
		key := newKey(false)
		_, _ = auth.Authenticate(ctx, key, true)
		auth.Drop()
		_, _ = auth.Authenticate(ctx, key, true)
		auth.KeyCreated()
		_, _ = auth.Authenticate(ctx, key, true)
		_, _ = auth.Authenticate(ctx, key, true)
		if n := lookups.n.Load(); n != 3 {
			t.Fatalf("lookups %d, want 3 (first, after Drop, after KeyCreated)", n)
		}
	})

	t.Run("expires", func(t *testing.T) {
		auth, lookups := countingAuthenticator(t, 30*time.Second)
		clock := testkit.NewClock(time.Now())
		auth.now = clock.Now
		key := newKey(false)
		_, _ = auth.Authenticate(ctx, key, true)
		clock.Advance(maxUnknownTTL + time.Second)
		_, _ = auth.Authenticate(ctx, key, true)
		if n := lookups.n.Load(); n != 2 {
			t.Fatalf("lookups %d, want 2 (the miss expired)", n)
		}
	})

	t.Run("bounded", func(t *testing.T) {
		u := newUnknownKeys(time.Minute)
		now := time.Now()
		first := string(hashKey(newKey(false)))
		u.add(first, now)
		for range maxUnknownKeys {
			u.add(string(hashKey(newKey(false))), now)
		}
		if len(u.seen) != maxUnknownKeys || u.has(first, now) {
			t.Fatalf("%d entries, oldest still there: %v", len(u.seen), u.has(first, now))
		}
	})
}
