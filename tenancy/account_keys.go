package tenancy

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"broll/internal/apperr"
	"broll/internal/database"
)

// AccountOwner is the principal of a dashboard user: it sees every purchase
// of the account (every root key's and their customers', legacy ones
// included) but is no key itself, so nothing can be created "under" it.
func AccountOwner(accountID uuid.UUID) Principal {
	return Principal{AccountID: accountID, Kind: KindRoot, Scopes: []Scope{ScopeBrollBilling}}
}

// IsAccountOwner reports the principal AccountOwner builds. The account's
// users run the whole account, so they deliberately see more than any one
// root key does: a root key sees only its own customers' purchases.
func (p Principal) IsAccountOwner() bool {
	return p.Kind == KindRoot && p.KeyID == uuid.Nil && p.AccountID != uuid.Nil
}

// RootKey is a root key with the number of its customer keys.
type RootKey struct {
	Key
	CustomerKeys     int
	LiveCustomerKeys int
}

// ListRootKeys lists an account's root keys, live ones first, newest first.
func (s *Service) ListRootKeys(ctx context.Context, accountID uuid.UUID) ([]RootKey, error) {
	out, err := database.Select(ctx, s.pool, func(r pgx.CollectableRow) (RootKey, error) {
		var k RootKey
		var row keyRow
		err := r.Scan(row.dest(&k.CustomerKeys, &k.LiveCustomerKeys)...)
		k.Key = row.key()
		return k, err
	}, rootKeysSQL, accountID)
	if err != nil {
		return nil, fmt.Errorf("list root keys: %w", err)
	}
	return out, nil
}

// CustomerKeyPage is one page of a root key's customer keys.
type CustomerKeyPage struct {
	Keys  []Key
	Total int
}

// CustomerKeysOf lists one page of the customer keys of an account's root
// key, live ones first, newest first. A root key of another account is
// not_found.
func (s *Service) CustomerKeysOf(ctx context.Context, accountID, rootID uuid.UUID, limit, offset int) (CustomerKeyPage, error) {
	var out CustomerKeyPage
	err := s.pool.QueryRow(ctx, customerKeyCountSQL, accountID, rootID).Scan(&out.Total)
	if err != nil {
		return out, fmt.Errorf("customer keys: %w", err)
	}
	out.Keys, err = database.Select(ctx, s.pool, collectKey, customerKeysSQL, accountID, rootID, limit, offset)
	if err != nil {
		return out, fmt.Errorf("customer keys: %w", err)
	}
	return out, nil
}

// RootPrincipal acts as one of the account's root keys, so that the
// dashboard creates customer keys through CreateCustomerKey exactly as
// POST /api/v1/keys does. Another account's key, or a key that is not a
// root key, is not_found; a revoked root key cannot create keys.
func (s *Service) RootPrincipal(ctx context.Context, accountID, rootID uuid.UUID) (Principal, error) {
	k, err := scanKey(s.pool.QueryRow(ctx, rootKeyOfAccountSQL, rootID, accountID))
	if err != nil {
		return Principal{}, database.Interpret(err, "key not found")
	}
	if k.RevokedAt != nil {
		return Principal{}, apperr.New(apperr.Invalid, "this root key is revoked; create customer keys under a live root key")
	}
	return Principal{KeyID: k.ID, AccountID: accountID, RootKeyID: k.ID, Kind: KindRoot, Label: k.Label, Scopes: k.Scopes}, nil
}

// AccountKeys lists up to limit keys of the account, root keys first, then
// by label, for choosing one (the purchases filter).
func (s *Service) AccountKeys(ctx context.Context, accountID uuid.UUID, limit int) ([]Key, error) {
	keys, err := database.Select(ctx, s.pool, collectKey, accountKeysSQL, accountID, limit)
	if err != nil {
		return nil, fmt.Errorf("account keys: %w", err)
	}
	return keys, nil
}
