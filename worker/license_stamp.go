package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"broll/billing/license"
	"broll/internal/tasks"
)

// handleStampLicense makes one purchase's licence-stamped copy
// (license.Stamper.Stamp). Failures (the store, ffmpeg) are retried with
// the worker's backoff; when asynq gives up, the purchase is recorded as
// unstampable and its downloads keep serving the original.
func (w *Worker) handleStampLicense(ctx context.Context, t *asynq.Task) error {
	var p tasks.StampPayload
	if err := json.Unmarshal(t.Payload(), &p); err != nil {
		return fmt.Errorf("stamp job: bad payload: %w: %w", err, asynq.SkipRetry)
	}
	if p.PurchaseID == uuid.Nil {
		return fmt.Errorf("stamp job: payload without purchase_id: %w", asynq.SkipRetry)
	}
	start := time.Now()
	sctx, span := w.step(ctx, "stamp", 1)
	outcome, err := w.stamps.Stamp(sctx, p.PurchaseID)
	endStep(span, err)
	switch {
	case err == nil:
		w.metrics.stampJobs.WithLabelValues(string(outcome)).Inc()
		if outcome == license.Stamped {
			w.metrics.stampLatency.Observe(time.Since(start).Seconds())
		}
		return nil
	case errors.Is(err, license.ErrPurchaseGone):
		w.metrics.stampJobs.WithLabelValues("gone").Inc()
		return fmt.Errorf("stamp job %s: %w: %w", p.PurchaseID, err, asynq.SkipRetry)
	case errors.Is(ctx.Err(), context.Canceled):
		w.metrics.stampJobs.WithLabelValues("interrupted").Inc()
		return fmt.Errorf("stamp job %s: %w", p.PurchaseID, err)
	}
	if !lastAttempt(ctx) {
		w.metrics.stampJobs.WithLabelValues("retry").Inc()
		return fmt.Errorf("stamp job %s: %w", p.PurchaseID, err)
	}
	w.metrics.stampJobs.WithLabelValues("failed").Inc()
	mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if merr := w.stamps.MarkUnstampable(mctx, p.PurchaseID, err.Error()); merr != nil {
		w.logger.Error("mark licence stamp failed", "purchase_id", p.PurchaseID, "err", merr)
	}
	w.logger.Warn("licence stamp gave up; the original is served", "purchase_id", p.PurchaseID, "reason", err.Error())
	return fmt.Errorf("stamp job %s: %w", p.PurchaseID, err)
}

// handleStampBatch turns the task of one purchase batch into a stamp task
// per purchase that needs one.
func (w *Worker) handleStampBatch(ctx context.Context, t *asynq.Task) error {
	var p tasks.StampBatchPayload
	if err := json.Unmarshal(t.Payload(), &p); err != nil {
		return fmt.Errorf("stamp batch: bad payload: %w: %w", err, asynq.SkipRetry)
	}
	if _, err := w.stamps.FanOut(ctx, p.PurchaseIDs); err != nil {
		return fmt.Errorf("stamp batch: %w", err)
	}
	return nil
}

// sweepStamps asks every StampSweepInterval, until ctx ends, for the
// stamped copies of the recent purchases that have none
// (license.Stamper.SweepLost): a purchase whose requests were lost while
// Redis was away is stamped without waiting for a download. The first sweep
// runs at once, for what an outage before the worker's start lost. A
// failure is logged once until a sweep works again.
func (w *Worker) sweepStamps(ctx context.Context) {
	w.sweepEvery(ctx, sweep{name: "licence stamp sweep", every: w.opts.StampSweepInterval, run: w.stamps.SweepLost,
		done: "licence stamp sweep asked for stamps", level: slog.LevelDebug, field: "purchases"})
}
