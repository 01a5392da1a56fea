// Package tenancy owns who may call the service and how much:
//
//   - accounts and their API keys (root, customer, ops): scopes, key
//     generation and hashing, per-key settings (spend limits, rate limits),
//     listing and revocation, the webhook events of key changes (written in
//     the change's own transaction), and an account's legacy v0 switch;
//   - the authenticator that turns a key into a principal, with its
//     in-process cache (and a short negative cache of unknown keys), both
//     dropped when the Redis epoch shows that Redis lost its data;
//   - the writers of the markers every admission reads (revocation, a key's
//     settings; package internal/admission), and the per-key usage counters
//     the admission counts in, flushed to Postgres and merged with unflushed
//     counts on read;
//   - the account dashboard's users (one-time set-password links, argon2id
//     password hashes, the password rules), sign-in with its lockout, and
//     sessions in Redis (idle and maximum age, sign out here or everywhere),
//     with sign-in attempts counted per email and per client address.
package tenancy
