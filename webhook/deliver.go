package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"broll/internal/database"
)

// Defaults of DeliveryOptions.
const (
	DefaultPollInterval = time.Second
	DefaultRetryBase    = 10 * time.Second
	DefaultRetryMax     = 10 * time.Hour
	// DefaultGiveUpAfter is how long an event is retried, and how long an
	// endpoint may fail without a success before it is disabled.
	DefaultGiveUpAfter = 72 * time.Hour
	DefaultConcurrency = 8
	// RequestTimeout is the whole of one attempt: a 2xx within it is success.
	RequestTimeout = 10 * time.Second
	// maxResponseBytes of a response are read (and discarded) so the
	// connection can be reused; a receiver cannot make the worker read more.
	maxResponseBytes = 4 << 10
	// DefaultLease is how long a claimed delivery is the claimer's: longer
	// than an attempt, so that only a worker that died leaves it to another.
	DefaultLease = 3 * RequestTimeout
)

// DeliveryOptions configure a Deliverer; zero values take the defaults.
type DeliveryOptions struct {
	Allow        Allow
	Logger       *slog.Logger
	PollInterval time.Duration
	// RetryBase is the pause after the first failure, doubled after each
	// further one up to RetryMax.
	RetryBase   time.Duration
	RetryMax    time.Duration
	GiveUpAfter time.Duration
	Concurrency int
	// Retention is how long events and their log are kept (Prune).
	Retention time.Duration
	// Lease is how long a claimed delivery stays with its claimer; a
	// worker killed mid-send leaves it due again after this.
	Lease time.Duration
	// Transport replaces the guarded transport (tests of the guard itself
	// never need it; it exists for a proxy in front of the worker).
	Transport http.RoundTripper
	// Observe, when set, is told each attempt's outcome and duration (the
	// worker's metrics: metrics.WebhookDeliveries).
	Observe func(outcome string, took time.Duration)
}

// Deliverer sends due deliveries. Several may run against one database:
// each claims its deliveries with FOR UPDATE SKIP LOCKED.
type Deliverer struct {
	pool   *pgxpool.Pool
	opts   DeliveryOptions
	client *http.Client
	now    func() time.Time
}

// NewDeliverer returns a deliverer over pool.
func NewDeliverer(pool *pgxpool.Pool, opts DeliveryOptions) *Deliverer {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&opts.PollInterval, DefaultPollInterval)
	def(&opts.RetryBase, DefaultRetryBase)
	def(&opts.RetryMax, DefaultRetryMax)
	def(&opts.GiveUpAfter, DefaultGiveUpAfter)
	def(&opts.Lease, DefaultLease)
	def(&opts.Retention, DefaultRetention)
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultConcurrency
	}
	rt := opts.Transport
	if rt == nil {
		rt = &http.Transport{
			Proxy:                 nil, // the guard must see the receiver's address, not a proxy's
			DialContext:           opts.Allow.dialContext,
			TLSHandshakeTimeout:   RequestTimeout,
			ResponseHeaderTimeout: RequestTimeout,
			MaxIdleConnsPerHost:   4,
			IdleConnTimeout:       90 * time.Second,
		}
	}
	return &Deliverer{pool: pool, opts: opts, now: time.Now, client: &http.Client{
		Transport: rt,
		Timeout:   RequestTimeout,
		// A redirect is an answer, not a 2xx: never follow it anywhere.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// Run delivers until ctx ends. An attempt in flight when it ends finishes
// or, if the process dies, is taken up by another worker after its lease.
func (d *Deliverer) Run(ctx context.Context) {
	t := time.NewTicker(d.opts.PollInterval)
	defer t.Stop()
	prune := time.NewTicker(time.Hour)
	defer prune.Stop()
	for {
		for {
			n, err := d.DeliverDue(ctx)
			if err != nil && ctx.Err() == nil {
				d.opts.Logger.Warn("webhook delivery", "err", err)
			}
			if err != nil || n < d.opts.Concurrency {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-prune.C:
			if _, err := d.Prune(ctx); err != nil && ctx.Err() == nil {
				d.opts.Logger.Warn("webhook prune", "err", err)
			}
		}
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
}

// claimSQL takes up to $1 due deliveries of enabled endpoints, pushes their
// next attempt out by the lease and returns what sending needs.
const claimSQL = `
WITH c AS (
    UPDATE webhook_deliveries d SET attempts = d.attempts + 1, next_attempt_at = now() + $2::interval
    FROM (
        SELECT d2.id FROM webhook_deliveries d2
        JOIN webhook_endpoints e ON e.id = d2.endpoint_id AND e.enabled
        WHERE d2.state = 'pending' AND d2.next_attempt_at <= now()
        ORDER BY d2.next_attempt_at
        LIMIT $1
        FOR UPDATE OF d2 SKIP LOCKED
    ) due
    WHERE d.id = due.id
    RETURNING d.id, d.endpoint_id, d.event_id, d.attempts
)
SELECT c.id, c.endpoint_id::text, e.url, c.attempts, ev.id, ev.type, ev.livemode, ev.data, ev.created_at,
       array(SELECT s.secret FROM webhook_secrets s WHERE s.endpoint_id = e.id
             AND (s.expires_at IS NULL OR s.expires_at > now()) ORDER BY s.id DESC)
FROM c JOIN webhook_endpoints e ON e.id = c.endpoint_id JOIN webhook_events ev ON ev.id = c.event_id`

// DeliverDue claims and sends one round of due deliveries and returns how
// many it sent.
func (d *Deliverer) DeliverDue(ctx context.Context) (int, error) {
	batch, err := database.Select(ctx, d.pool, func(r pgx.CollectableRow) (claimed, error) {
		var c claimed
		err := r.Scan(&c.id, &c.endpoint, &c.url, &c.attempts, &c.eventID, &c.eventType, &c.livemode, &c.data, &c.created, &c.secrets)
		return c, err
	}, claimSQL, d.opts.Concurrency, d.opts.Lease)
	if err != nil {
		return 0, fmt.Errorf("claim deliveries: %w", err)
	}
	var wg sync.WaitGroup
	for _, c := range batch {
		wg.Go(func() {
			// The outcome is recorded even when ctx ends mid-attempt, so the
			// log and the retry schedule stay true.
			res := d.send(ctx, c)
			if d.opts.Observe != nil {
				d.opts.Observe(res.outcome(), res.duration)
			}
			if err := d.record(context.WithoutCancel(ctx), c, res); err != nil {
				d.opts.Logger.Warn("webhook record", "delivery", c.id, "err", err)
			}
		})
	}
	wg.Wait()
	return len(batch), nil
}

// result is the outcome of one attempt.
type result struct {
	status   int // 0: no response
	duration time.Duration
	err      string
}

func (r result) ok() bool { return r.status >= 200 && r.status < 300 }

// body is the JSON every receiver gets, the same on every attempt.
func (c claimed) body() ([]byte, error) {
	return json.Marshal(struct {
		ID        string          `json:"id"`
		Type      string          `json:"type"`
		CreatedAt time.Time       `json:"created_at"`
		Livemode  bool            `json:"livemode"`
		Data      json.RawMessage `json:"data"`
	}{c.eventID, c.eventType, c.created.UTC(), c.livemode, c.data})
}

func (d *Deliverer) send(ctx context.Context, c claimed) result {
	start := d.now()
	body, err := c.body()
	if err != nil {
		return result{err: "could not encode the event"}
	}
	ts := start.Unix()
	sig, err := Sign(c.secrets, c.eventID, ts, body)
	if err != nil || len(c.secrets) == 0 {
		return result{err: "the endpoint has no usable secret"}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return result{err: "the endpoint URL is not usable"}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "broll-webhooks/1")
	req.Header.Set("webhook-id", c.eventID)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	req.Header.Set("webhook-signature", sig)
	resp, err := d.client.Do(req)
	dur := d.now().Sub(start)
	if err != nil {
		return result{duration: dur, err: describe(err)}
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponseBytes))
	_ = resp.Body.Close()
	r := result{status: resp.StatusCode, duration: dur}
	if !r.ok() {
		r.err = fmt.Sprintf("the endpoint answered %d", resp.StatusCode)
	}
	return r
}

// describe turns a transport error into a log line that names the kind of
// failure and nothing internal.
func describe(err error) string {
	var ne interface{ Timeout() bool }
	switch {
	case errors.Is(err, ErrForbiddenAddress):
		return "refused: the endpoint resolves to a non-public address"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return fmt.Sprintf("no answer within %s", RequestTimeout)
	default:
		return "connection failed: " + err.Error()
	}
}

// backoff is the pause before attempt n+1 after n failed attempts.
func (d *Deliverer) backoff(n int) time.Duration {
	n = max(n, 1)
	if n > 30 {
		return d.opts.RetryMax
	}
	b := d.opts.RetryBase << (n - 1)
	if b <= 0 || b > d.opts.RetryMax {
		return d.opts.RetryMax
	}
	return b
}

// recordSQL logs an attempt and moves its delivery and endpoint on, in one
// statement: $1 delivery, $2 endpoint, $3 status (NULL: none), $4 ms,
// $5 error, $6 success, $7 pause before the next attempt, $8 how long to
// retry and to tolerate an endpoint's failures.
const recordSQL = `
WITH log AS (
    INSERT INTO webhook_attempts (delivery_id, endpoint_id, status_code, duration_ms, error)
    VALUES ($1, $2::uuid, $3, $4, $5)
), del AS (
    UPDATE webhook_deliveries SET
        state = CASE WHEN $6 THEN 'delivered'
                     WHEN created_at < now() - $8::interval THEN 'failed' ELSE 'pending' END,
        delivered_at = CASE WHEN $6 THEN now() END,
        next_attempt_at = CASE WHEN $6 THEN next_attempt_at ELSE now() + $7::interval END
    WHERE id = $1
)
UPDATE webhook_endpoints SET
    failing_since = CASE WHEN $6 THEN NULL ELSE coalesce(failing_since, now()) END,
    enabled = enabled AND ($6 OR coalesce(failing_since, now()) > now() - $8::interval),
    disabled_at = CASE WHEN enabled AND NOT $6 AND coalesce(failing_since, now()) <= now() - $8::interval
                       THEN now() ELSE disabled_at END,
    disabled_reason = CASE WHEN enabled AND NOT $6 AND coalesce(failing_since, now()) <= now() - $8::interval
                           THEN 'disabled automatically: every delivery failed for ' || $9::text
                           ELSE disabled_reason END
WHERE id = $2::uuid`

func (d *Deliverer) record(ctx context.Context, c claimed, r result) error {
	var status *int
	if r.status != 0 {
		status = &r.status
	}
	_, err := d.pool.Exec(ctx, recordSQL, c.id, c.endpoint, status, int(r.duration.Milliseconds()), r.err, r.ok(),
		d.backoff(c.attempts), d.opts.GiveUpAfter, humanDuration(d.opts.GiveUpAfter))
	if err != nil {
		return fmt.Errorf("record delivery: %w", err)
	}
	return nil
}

func humanDuration(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		return strconv.Itoa(int(d/(24*time.Hour))) + " days"
	}
	return d.String()
}
