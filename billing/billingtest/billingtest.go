// Package billingtest makes accounts and keys for tests in one line, through
// the same code paths as production.
package billingtest

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"broll/billing"
	"broll/internal/money"
	"broll/tenancy"
)

// AccountOpts are the options of Account; the zero value is a usable account.
type AccountOpts struct {
	Name    string
	Credits money.Cents
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
	opened, err := billing.New(pool).OpenAccount(context.Background(), opts.Name, source, opts.Credits)
	if err != nil {
		t.Fatalf("open account: %v", err)
	}
	return Account{
		ID: opened.Account.ID, Source: source, RootKey: opened.RootKey,
		Root: tenancy.Principal{
			KeyID: opened.RootKey.ID, AccountID: opened.Account.ID, RootKeyID: opened.RootKey.ID,
			Kind: tenancy.KindRoot, Scopes: opened.RootKey.Scopes,
		},
	}
}

// CustomerKey issues a customer key under the account's root key.
func (a Account) CustomerKey(t testing.TB, pool *pgxpool.Pool, label string, scopes ...string) tenancy.IssuedKey {
	t.Helper()
	k, err := tenancy.New(pool).CreateCustomerKey(context.Background(), a.Root, label, scopes)
	if err != nil {
		t.Fatalf("create customer key: %v", err)
	}
	return k
}
