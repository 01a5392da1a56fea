// Package dashboard is the account dashboard: server-rendered pages under
// /dashboard where an account's users sign in, create and revoke root and
// customer keys, and watch the balance, usage and purchases. It is an adapter
// like the JSON API: every number and every change comes from tenancy and
// billing, scoped to the signed-in user's account.
package dashboard
