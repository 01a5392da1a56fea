package worker

import (
	"context"
	"log/slog"
)

// sweepCollections removes, every CollectionSweepInterval until ctx ends,
// the collections of keys revoked longer ago than their retention
// (collections.Service.SweepRevoked); the first sweep runs at once. A
// failure is logged once until a sweep works again.
func (w *Worker) sweepCollections(ctx context.Context) {
	w.sweepEvery(ctx, sweep{name: "collection sweep", every: w.opts.CollectionSweepInterval, run: w.collections.SweepRevoked,
		done: "collection sweep removed revoked keys' collections", level: slog.LevelInfo, field: "collections"})
}
