package billing

import (
	"context"

	"github.com/google/uuid"

	"broll/billing/visible"
	"broll/internal/apperr"
	"broll/internal/paging"
	"broll/tenancy"
)

// visibleTo is the filter of the purchases principal p sees: the one rule
// of package visible, used by the listing, its export, the balance's month
// to date and the daily spend.
func visibleTo(p tenancy.Principal) *paging.Builder {
	f := &paging.Builder{}
	f.Where(visible.Purchases(p, "p", f.Arg))
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
