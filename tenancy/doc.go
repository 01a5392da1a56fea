// Package tenancy owns accounts, API keys (root, customer, ops), scopes, key
// generation and hashing, the authenticator that turns a key into a
// principal, revocation and per-key usage counters.
package tenancy
