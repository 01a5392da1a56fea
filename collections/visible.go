package collections

import (
	"broll/internal/paging"
	"broll/tenancy"
)

// visibleTo is the condition under which principal p reads the row of
// collections c, added to f: the rule of who may see a purchase
// (billing/visible) over collections, which have no legacy rows.
//   - a customer key (live or test) reads its own;
//   - a root key reads its own and its customer keys' live ones, over the
//     key family (broll_key_family), never a sibling root's or its
//     customers'; its test keys' are apart, as their purchases are;
//   - the account owner (the dashboard) reads the account's live ones, or
//     with Test set its test ones;
//   - anyone else reads none.
//
// A revoked key's collections stay readable by its root until the sweep
// removes them (SweepRevoked).
func visibleTo(p tenancy.Principal, f *paging.Builder) string {
	switch {
	case p.IsAccountOwner():
		cond := "c.account_id = " + f.Arg(p.AccountID) + " AND "
		if p.Test {
			return cond + "NOT c.livemode"
		}
		return cond + "c.livemode"
	case p.Kind == tenancy.KindRoot:
		return "c.account_id = " + f.Arg(p.AccountID) + " AND c.livemode AND c.api_key_id IN (SELECT f.id FROM broll_key_family(" +
			f.Arg(p.KeyID) + ") f(id))"
	case p.Kind == tenancy.KindCustomer:
		return "c.account_id = " + f.Arg(p.AccountID) + " AND c.api_key_id = " + f.Arg(p.KeyID)
	default:
		return "false"
	}
}
