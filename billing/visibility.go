package billing

import (
	"context"

	"github.com/google/uuid"

	"broll/internal/apperr"
	"broll/tenancy"
)

// visibleTo is the one definition of which purchases a principal sees,
// used by the listing, its export, the balance's month to date and the
// daily spend:
//   - a customer key: its own purchases;
//   - a root key: its own, those of its own customer keys and the account's
//     legacy (v0) ones, never those of a sibling root key of the same
//     account or of that root's customers (an account may hold one root key
//     per integration, and they must not read each other's customers);
//   - the account owner (tenancy.AccountOwner, the dashboard's users, who
//     run the whole account): every purchase of the account.
//
// Test purchases are a world apart: a test key's purchases are its own and
// so all test; a root key (always live) never sees its test keys' ones; the
// account owner sees live ones, or with Test set (the dashboard's test
// view) test ones only.
//
// Each case is its own SQL text rather than one statement with flags, so
// that the planner can use the key index for a customer key.
func visibleTo(p tenancy.Principal) *listFilter {
	f := &listFilter{}
	switch {
	case p.IsAccountOwner() && p.Test:
		f.where = append(f.where, "p.account_id = "+f.arg(p.AccountID)+" AND NOT p.livemode")
	case p.IsAccountOwner():
		f.where = append(f.where, "p.account_id = "+f.arg(p.AccountID)+" AND p.livemode")
	case p.Kind == tenancy.KindRoot:
		acct, key := f.arg(p.AccountID), f.arg(p.KeyID)
		f.where = append(f.where, "p.account_id = "+acct+" AND p.livemode AND (p.legacy OR p.api_key_id = "+key+
			" OR p.api_key_id IN (SELECT c.id FROM api_keys c WHERE c.parent_id = "+key+"))")
	case p.Kind == tenancy.KindCustomer:
		acct, key := f.arg(p.AccountID), f.arg(p.KeyID)
		f.where = append(f.where, "p.account_id = "+acct+" AND p.api_key_id = "+key)
	default:
		// Ops keys hold no account and see no purchases.
		f.where = append(f.where, "false")
	}
	return f
}

// checkKeyFilter refuses an api_key_id filter naming a key the principal may
// not narrow to: a root key names itself or one of its own customer keys,
// the account owner any key of the account. Anything else, a sibling root
// key's customer as much as another account's key, is the same 404.
func (s *Service) checkKeyFilter(ctx context.Context, p tenancy.Principal, keyID uuid.UUID) error {
	var ok bool
	var err error
	switch {
	case p.IsAccountOwner():
		err = s.pool.QueryRow(ctx, ownKeyOfAccountSQL, keyID, p.AccountID).Scan(&ok)
	case p.Kind == tenancy.KindRoot:
		err = s.pool.QueryRow(ctx, ownKeyOfRootSQL, keyID, p.AccountID, p.KeyID).Scan(&ok)
	}
	if err != nil {
		return err
	}
	if !ok {
		return apperr.NotFoundf("key not found")
	}
	return nil
}
