package worker

import (
	"context"
	"time"
)

// sweepCollections removes, every CollectionSweepInterval until ctx ends,
// the collections of keys revoked longer ago than their retention
// (collections.Service.SweepRevoked); the first sweep runs at once. A
// failure is logged once until a sweep works again.
func (w *Worker) sweepCollections(ctx context.Context) {
	t := time.NewTicker(w.opts.CollectionSweepInterval)
	defer t.Stop()
	failing := false
	for {
		n, err := w.collections.SweepRevoked(ctx, time.Now())
		switch {
		case err != nil && ctx.Err() == nil && !failing:
			w.logger.Warn("collection sweep failed; the next one tries again", "err", err)
			failing = true
		case err == nil:
			if failing {
				w.logger.Info("collection sweep works again", "collections", n)
			} else if n > 0 {
				w.logger.Info("collection sweep removed revoked keys' collections", "collections", n)
			}
			failing = false
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
