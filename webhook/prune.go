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

// Prune deletes events older than the retention (with their deliveries and
// attempts) and returns how many went. Deliveries still pending are kept.
func (d *Deliverer) Prune(ctx context.Context) (int64, error) {
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
