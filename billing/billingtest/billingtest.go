// Package billingtest makes accounts and keys for tests in one line, through
// the same code paths as production: the services of the composition root.
package billingtest

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"broll/internal/money"
	"broll/tenancy"
	"broll/wiring/wiringtest"
)

// AccountOpts are the options of Account; the zero value is a usable account.
type AccountOpts struct {
	Name    string
	Credits money.Cents
	// Legacy marks the account as a v0 customer, served by the legacy API.
	Legacy bool
}

// Account is a created account with its root key.
type Account struct {
	ID      uuid.UUID
	Source  string
	RootKey tenancy.IssuedKey
	Root    tenancy.Principal
}

var seq atomic.Int64

// NewAccount opens an account with a unique source and its root key.
func NewAccount(t testing.TB, pool *pgxpool.Pool, opts AccountOpts) Account {
	t.Helper()
	if opts.Name == "" {
		opts.Name = "Test Platform"
	}
	source := fmt.Sprintf("t%d-%d", time.Now().UnixNano()%1e12, seq.Add(1))
	opened, err := wiringtest.Over(t, pool).Billing.OpenAccount(context.Background(), opts.Name, source, opts.Credits)
	if err != nil {
		t.Fatalf("open account: %v", err)
	}
	if opts.Legacy {
		if _, err := wiringtest.Over(t, pool).Tenancy.SetLegacyEnabled(context.Background(), source, true); err != nil {
			t.Fatalf("enable legacy: %v", err)
		}
	}
	return Account{
		ID: opened.Account.ID, Source: source, RootKey: opened.RootKey,
		Root: tenancy.Principal{
			KeyID: opened.RootKey.ID, AccountID: opened.Account.ID, RootKeyID: opened.RootKey.ID,
			Kind: tenancy.KindRoot, Scopes: opened.RootKey.Scopes,
		},
	}
}

// AnotherRoot issues a second root key of the same account (one per
// integration) and returns the account as seen through it: its Root and
// CustomerKey are that key's.
func (a Account) AnotherRoot(t testing.TB, pool *pgxpool.Pool, label string) Account {
	t.Helper()
	k, err := wiringtest.Over(t, pool).Tenancy.CreateRootKey(context.Background(), a.ID, label)
	if err != nil {
		t.Fatalf("create root key: %v", err)
	}
	a.RootKey, a.Root = k, Principal(a, k)
	return a
}

// CustomerKey issues a customer key under the account's root key.
func (a Account) CustomerKey(t testing.TB, pool *pgxpool.Pool, label string, scopes ...string) tenancy.IssuedKey {
	t.Helper()
	k, err := wiringtest.Over(t, pool).Tenancy.CreateCustomerKey(context.Background(), a.Root, label, scopes)
	if err != nil {
		t.Fatalf("create customer key: %v", err)
	}
	return k
}

// TestKey issues a test-mode customer key (dsk_test_) under the account's
// root key.
func (a Account) TestKey(t testing.TB, pool *pgxpool.Pool, label string) tenancy.IssuedKey {
	t.Helper()
	k, err := wiringtest.Over(t, pool).Tenancy.CreateCustomerKeyWith(context.Background(), a.Root, tenancy.CustomerKeySpec{Label: label, Test: true})
	if err != nil {
		t.Fatalf("create test key: %v", err)
	}
	return k
}

// Videos inserts n live clips of a tier straight into the catalog table and
// returns their ids.
func Videos(t testing.TB, pool *pgxpool.Pool, n int, tier string) []uuid.UUID {
	t.Helper()
	ids := make([]uuid.UUID, n)
	for i := range ids {
		ids[i] = uuid.New()
	}
	_, err := pool.Exec(context.Background(), `
		INSERT INTO videos (id, title, emotion, gender, difficulty, media_key)
		SELECT id, 'Test clip ' || id, 'happy', 'female', $2, 'clips/' || id || '/full.avi'
		FROM unnest($1::uuid[]) AS id`, ids, tier)
	if err != nil {
		t.Fatalf("insert videos: %v", err)
	}
	return ids
}

// Principal is the principal of an issued key, as the authenticator builds it.
func Principal(a Account, k tenancy.IssuedKey) tenancy.Principal {
	root := k.ID
	if k.ParentID.Valid {
		root = k.ParentID.UUID
	}
	return tenancy.Principal{KeyID: k.ID, AccountID: a.ID, RootKeyID: root, Kind: k.Kind, Label: k.Label, Scopes: k.Scopes, Test: k.Test}
}
