// Package outbox names the webhook event types and writes events into the
// outbox table (webhook_events) inside the caller's own transaction, so that
// an event exists exactly when the change it reports committed. Delivery is
// the webhook package's business; writers need to know nothing of it.
package outbox

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
)

// The event types endpoints may subscribe to.
const (
	PurchaseCompleted = "purchase.completed"
	BalanceLow        = "balance.low"
	KeyCreated        = "key.created"
	KeyRevoked        = "key.revoked"
	ClipsEmbedded     = "clips.embedded"
	SpendLimitReached = "spend_limit.reached"
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
}

// Known reports whether t is a subscribable event type.
func Known(t string) bool { return slices.Contains(Types, t) }

// Execer is what a transaction (or a pool, for a single statement) offers.
type Execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// InsertSQL writes one event: account (NULL for a service-wide event), type
// and data (jsonb). The id and time are the table's defaults; the fan-out
// trigger queues a delivery for every endpoint subscribed to the type.
const InsertSQL = `INSERT INTO webhook_events (account_id, type, data) VALUES ($1, $2, $3)`

// Write records an event in q's transaction. data is marshalled to JSON.
func Write(ctx context.Context, q Execer, account uuid.NullUUID, typ string, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	if _, err := q.Exec(ctx, InsertSQL, account, typ, b); err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	return nil
}
