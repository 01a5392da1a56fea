package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"broll/internal/database"
)

// Delivery is fair: one account's slow or dead receivers never hold up
// another account's events. Each worker keeps up to Concurrency attempts in
// flight and claims a new delivery whenever one ends (no batch waits for
// its slowest member); a claim takes at most PerEndpoint deliveries of an
// endpoint and PerAccount of an account, counting what every worker has in
// flight (leased_until), and takes accounts in turn (each account's oldest
// due delivery, then each one's second...) rather than the oldest first.

// Run delivers until ctx ends, then waits for the attempts in flight, which
// ctx's end cuts short and gives back undone (released). If the process
// dies instead, another worker takes them up after their lease.
func (d *Deliverer) Run(ctx context.Context) {
	poll := time.NewTicker(d.opts.PollInterval)
	defer poll.Stop()
	prune := time.NewTicker(time.Hour)
	defer prune.Stop()
	d.sealPlaintext(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	free := d.opts.Concurrency
	finished := make(chan struct{}, d.opts.Concurrency)
	for {
		if free > 0 && ctx.Err() == nil {
			batch, err := d.claim(ctx, free)
			if err != nil && ctx.Err() == nil {
				d.opts.Logger.Warn("webhook delivery", "err", err)
			}
			for _, c := range batch {
				free--
				wg.Go(func() {
					d.attempt(ctx, c)
					finished <- struct{}{}
				})
			}
			if err == nil && len(batch) > 0 && free > 0 {
				continue // more may be due
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-finished:
			free++
		case <-poll.C:
		case <-prune.C:
			if _, err := d.Prune(ctx); err != nil && ctx.Err() == nil {
				d.opts.Logger.Warn("webhook prune", "err", err)
			}
			d.sealPlaintext(ctx)
		}
	}
}

// DeliverDue claims one round of due deliveries (as many as Concurrency and
// the fair shares allow), sends them and returns how many it sent once all
// are recorded. Run is the worker's loop; this is one step of it.
func (d *Deliverer) DeliverDue(ctx context.Context) (int, error) {
	batch, err := d.claim(ctx, d.opts.Concurrency)
	if err != nil {
		return 0, err
	}
	var wg sync.WaitGroup
	for _, c := range batch {
		wg.Go(func() { d.attempt(ctx, c) })
	}
	wg.Wait()
	return len(batch), nil
}

// attempt sends one claimed delivery and records the outcome, even when ctx
// ends meanwhile, so the log and the retry schedule stay true; an attempt
// that ctx's end cut short (the worker stopping) is released instead, not
// counted against the endpoint.
func (d *Deliverer) attempt(ctx context.Context, c claimed) {
	res := d.send(ctx, c)
	rctx := context.WithoutCancel(ctx)
	if ctx.Err() != nil && res.status == 0 {
		if _, err := d.pool.Exec(rctx, releaseSQL, c.id, c.attempts); err != nil {
			d.opts.Logger.Warn("webhook release", "delivery", c.id, "err", err)
		}
		return
	}
	if d.opts.Observe != nil {
		d.opts.Observe(res.outcome(), res.duration)
	}
	if err := d.record(rctx, c, res); err != nil {
		d.opts.Logger.Warn("webhook record", "delivery", c.id, "err", err)
	}
}

// sealPlaintext seals secrets still stored in plaintext: at the start of
// an upgraded worker, and hourly for any an API node of the previous
// release wrote during a rolling upgrade.
func (d *Deliverer) sealPlaintext(ctx context.Context) {
	n, err := SealSecrets(ctx, d.pool, d.sealer)
	if err != nil && ctx.Err() == nil {
		d.opts.Logger.Warn("webhook secrets not sealed", "err", err)
	}
	if n > 0 {
		d.opts.Logger.Info("sealed webhook secrets kept in plaintext", "count", n)
	}
}

// claimed is a delivery this worker holds the lease of.
type claimed struct {
	id        int64
	endpoint  string
	url       string
	attempts  int
	eventID   string
	eventType string
	livemode  bool
	data      json.RawMessage
	created   time.Time
	secrets   []string
	// trace is the W3C traceparent of the span that wrote the event (the
	// trace id alone for an event of an earlier release), "" for none:
	// the attempt is a span of that trace (trace.go).
	trace string
}

// claim takes up to n due deliveries and opens their endpoints' secrets.
func (d *Deliverer) claim(ctx context.Context, n int) ([]claimed, error) {
	batch, err := database.Select(ctx, d.pool, func(r pgx.CollectableRow) (claimed, error) {
		// claimed keeps its fields to this package, out of a struct scan's
		// reach, hence the list of targets.
		var c claimed
		err := r.Scan(&c.id, &c.endpoint, &c.url, &c.attempts, &c.eventID, &c.eventType, &c.livemode, &c.data, &c.created, &c.trace, &c.secrets)
		return c, err
	}, claimSQL, n, d.opts.Lease, d.opts.PerEndpoint, d.opts.PerAccount)
	if err != nil {
		return nil, fmt.Errorf("claim deliveries: %w", err)
	}
	for i := range batch {
		batch[i].secrets = d.openSecrets(batch[i])
	}
	return batch, nil
}

// openSecrets returns the usable secrets of a claimed delivery's endpoint;
// one that does not open (sealed under a key no longer configured) is left
// out and logged, and with none the attempt fails as having no secret.
func (d *Deliverer) openSecrets(c claimed) []string {
	endpoint, err := uuid.Parse(c.endpoint)
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(c.secrets))
	for _, stored := range c.secrets {
		s, err := openSecret(d.sealer, endpoint, stored)
		if err != nil {
			d.opts.Logger.Warn("webhook secret does not open: is BROLL_SIGNING_KEY the API's?", "endpoint", c.endpoint, "err", err)
			continue
		}
		out = append(out, s)
	}
	return out
}
