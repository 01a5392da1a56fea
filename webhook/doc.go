// Package webhook owns the account's webhook endpoints and the delivery of
// the events the outbox (internal/outbox) holds: signing as Standard
// Webhooks says, sending only to public addresses unless allowed, retrying
// with exponential backoff and disabling an endpoint that keeps failing.
package webhook
