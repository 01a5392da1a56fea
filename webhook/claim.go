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
		if _, err := d.pool.Exec(rctx, `UPDATE webhook_deliveries SET attempts = greatest(attempts - 1, 0),
			next_attempt_at = now(), leased_until = NULL WHERE id = $1 AND state = 'pending'`, c.id); err != nil {
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
	// trace is the W3C trace id of the request that wrote the event, ""
	// for none: the attempt sends a traceparent that continues it.
	trace string
}

// claimSQL takes up to $1 due deliveries of enabled endpoints, fairly:
// at most $3 in flight per endpoint and $4 per account, across workers
// (leased_until), accounts taken in turn. It pushes their next attempt out
// by the lease $2, marks them in flight for as long, and returns what
// sending needs. The final lock re-checks that a delivery is still due, so
// one another worker claimed meanwhile is skipped, not sent twice.
const claimSQL = `
WITH inflight AS (
    SELECT d.endpoint_id, count(*) AS n FROM webhook_deliveries d
    WHERE d.state = 'pending' AND d.leased_until > now()
    GROUP BY d.endpoint_id
), busy AS (
    SELECT e.account_id, sum(i.n) AS n FROM inflight i JOIN webhook_endpoints e ON e.id = i.endpoint_id
    GROUP BY e.account_id
), candidates AS (
    SELECT due.id, e.account_id, due.next_attempt_at
    FROM webhook_endpoints e
    LEFT JOIN inflight i ON i.endpoint_id = e.id
    CROSS JOIN LATERAL (
        SELECT d2.id, d2.next_attempt_at FROM webhook_deliveries d2
        WHERE d2.endpoint_id = e.id AND d2.state = 'pending' AND d2.next_attempt_at <= now()
        ORDER BY d2.next_attempt_at, d2.id
        LIMIT greatest($3 - coalesce(i.n, 0), 0)
    ) due
    WHERE e.enabled
), ranked AS (
    SELECT c.id, c.next_attempt_at,
           row_number() OVER (PARTITION BY c.account_id ORDER BY c.next_attempt_at, c.id) + coalesce(b.n, 0) AS turn
    FROM candidates c LEFT JOIN busy b ON b.account_id = c.account_id
), picked AS (
    SELECT r.id FROM ranked r WHERE r.turn <= $4 ORDER BY r.turn, r.next_attempt_at, r.id LIMIT $1
), locked AS (
    SELECT d3.id FROM webhook_deliveries d3
    WHERE d3.id IN (SELECT id FROM picked) AND d3.state = 'pending' AND d3.next_attempt_at <= now()
    FOR UPDATE SKIP LOCKED
), c AS (
    UPDATE webhook_deliveries d SET attempts = d.attempts + 1,
        next_attempt_at = now() + $2::interval, leased_until = now() + $2::interval
    FROM locked WHERE d.id = locked.id
    RETURNING d.id, d.endpoint_id, d.event_id, d.attempts
)
SELECT c.id, c.endpoint_id::text, e.url, c.attempts, ev.id, ev.type, ev.livemode, ev.data, ev.created_at,
       coalesce(ev.trace_id, ''),
       array(SELECT s.secret FROM webhook_secrets s WHERE s.endpoint_id = e.id
             AND (s.expires_at IS NULL OR s.expires_at > now()) ORDER BY s.id DESC)
FROM c JOIN webhook_endpoints e ON e.id = c.endpoint_id JOIN webhook_events ev ON ev.id = c.event_id`

// claim takes up to n due deliveries and opens their endpoints' secrets.
func (d *Deliverer) claim(ctx context.Context, n int) ([]claimed, error) {
	batch, err := database.Select(ctx, d.pool, func(r pgx.CollectableRow) (claimed, error) {
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
