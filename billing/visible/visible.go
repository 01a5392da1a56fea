// Package visible is the one rule of who may see a purchase. Every reader
// of purchases goes through Purchases: the listing, its summary and export,
// the balance's month to date, the daily spend (package billing) and the
// licence read (billing/license). The key family it uses, which keys a root
// key answers for, is the SQL function broll_key_family
// (migrations/functions/key_family.sql), which the webhook fan-out and the
// listing's key filter call too, so that the rule is written once in Go and
// its one relation once in SQL.
//
// The rule:
//   - a customer key sees its own purchases;
//   - a root key sees its own, those of its family's customer keys and the
//     account's legacy (v0) ones, never those of a sibling root key of the
//     same account or of that root's customers (an account may hold one root
//     key per integration, and they must not read each other's customers);
//   - the account owner (tenancy.AccountOwner, the dashboard's users, who
//     run the whole account) sees every purchase of the account;
//   - test purchases are a world apart: a test key's purchases are its own
//     and so all test; a root key (always live) never sees its test keys'
//     ones; the account owner sees live ones, or with Test set (the
//     dashboard's test view) test ones only;
//   - anything else (an ops key, a principal of no account) sees nothing.
//
// A revoked key's purchases stay visible to whoever saw them: revocation
// ends what a key may do, not what its root or the account may read.
package visible

import "broll/tenancy"

// Purchases is the SQL condition under which principal p sees the row of
// purchases named alias. arg adds a value to the statement's arguments and
// returns its placeholder. Each case is its own SQL text rather than one
// statement with flags, so that the planner uses the key's index for a
// customer key and the account's for the others.
func Purchases(p tenancy.Principal, alias string, arg func(any) string) string {
	a := alias + "."
	switch {
	case p.IsAccountOwner() && p.Test:
		return a + "account_id = " + arg(p.AccountID) + " AND NOT " + a + "livemode"
	case p.IsAccountOwner():
		return a + "account_id = " + arg(p.AccountID) + " AND " + a + "livemode"
	case p.Kind == tenancy.KindRoot:
		acct, key := arg(p.AccountID), arg(p.KeyID)
		return a + "account_id = " + acct + " AND " + a + "livemode AND (" + a + "legacy OR " +
			a + "api_key_id IN (SELECT f.id FROM broll_key_family(" + key + ") f(id)))"
	case p.Kind == tenancy.KindCustomer:
		return a + "account_id = " + arg(p.AccountID) + " AND " + a + "api_key_id = " + arg(p.KeyID)
	default:
		return "false"
	}
}
