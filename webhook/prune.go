package webhook

import (
	"context"
	"fmt"
	"time"
)

// DefaultRetention is how long events, their deliveries and the delivery
// log are kept: long past the 3 days of retries, short enough that an
// account without endpoints does not grow the outbox forever.
const DefaultRetention = 30 * 24 * time.Hour

// pruneBatch bounds one delete, so pruning never holds long locks.
const pruneBatch = 5000

// Prune gives up the pending deliveries of endpoints whose root key was
// revoked (never claimed again; the revocation leaves them, so that its
// cost does not grow with their backlog), then deletes events older than
// the retention (with their deliveries and attempts) and returns how many
// went. Other deliveries still pending are kept.
func (d *Deliverer) Prune(ctx context.Context) (int64, error) {
	for {
		tag, err := d.pool.Exec(ctx, giveUpEndedSQL, pruneBatch)
		if err != nil {
			return 0, fmt.Errorf("give up deliveries of ended webhook endpoints: %w", err)
		}
		if tag.RowsAffected() < pruneBatch {
			break
		}
	}
	var total int64
	for {
		tag, err := d.pool.Exec(ctx, pruneSQL, d.opts.Retention, pruneBatch)
		if err != nil {
			return total, fmt.Errorf("prune webhook events: %w", err)
		}
		total += tag.RowsAffected()
		if tag.RowsAffected() < pruneBatch {
			return total, nil
		}
	}
}
