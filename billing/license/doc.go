// Package license holds the licences of purchases: every purchase is a
// single-user licence (SPEC.md, usage rules 1-4) with an unguessable id of
// its own (lic_ and 32 hex digits), chosen with the purchase and stored on
// its row (migrations/00024_licenses.sql).
//
// A licence is shown as a document: a canonical JSON object (keys sorted, no
// white space, Document) signed with Ed25519 as a compact JWS whose header
// names the key (kid, the key's RFC 7638 thumbprint). The public keys are a
// JWKS (Keyring.JWKS) that the API serves at
// /.well-known/broll-license-keys.json, so that anyone checks a licence with
// any JOSE library and no account. Documents are signed when they are asked
// for, with the licence's status at that moment, never on the purchase path:
// a purchase only stores the id it chose. Each carries the time it was
// signed (iat, in the payload, as the JWT claim), so that a saved document
// proves the licence as of that time and no later: a revocation since does
// not undo its signature, and the current status is read on the verify page
// (or, for a platform's licences in bulk, from its purchase records).
//
// Two views of one licence are signed: the holder's (the purchase's key or
// its root: the price paid and the purchase id included) and the public one
// (the verify page: no price, no purchase id, no revocation reason, no key).
package license
