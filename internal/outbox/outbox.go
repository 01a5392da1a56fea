// Package outbox names the webhook event types. Writers insert events into
// the outbox table (webhook_events) inside their own transaction, so that
// an event exists exactly when the change it reports committed. Delivery is
// the webhook package's business; writers need to know nothing of it.
package outbox

import (
	"slices"
)

// The event types endpoints may subscribe to.
const (
	PurchaseCompleted = "purchase.completed"
	BalanceLow        = "balance.low"
	KeyCreated        = "key.created"
	KeyRevoked        = "key.revoked"
	ClipsEmbedded     = "clips.embedded"
	SpendLimitReached = "spend_limit.reached"
	// LicenseRevoked: an operator revoked a purchase's licence.
	LicenseRevoked = "license.revoked"
	// Ping is sent by POST /api/v1/webhooks/{id}/test to one endpoint only;
	// nobody subscribes to it.
	Ping = "ping"
)

// Types lists the subscribable event types, in the order they are documented.
// A new event type is one more line here (and its writer).
var Types = []string{
	PurchaseCompleted,
	BalanceLow,
	KeyCreated,
	KeyRevoked,
	ClipsEmbedded,
	SpendLimitReached,
	LicenseRevoked,
}

// Known reports whether t is a subscribable event type.
func Known(t string) bool { return slices.Contains(Types, t) }
