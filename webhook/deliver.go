package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.opentelemetry.io/otel/trace"

	"broll/internal/seal"
	"broll/internal/telemetry"
)

// Defaults of DelivererOptions.
const (
	DefaultPollInterval = time.Second
	DefaultRetryBase    = 10 * time.Second
	DefaultRetryMax     = 10 * time.Hour
	// DefaultGiveUpAfter is how long an event is retried, and how long an
	// endpoint may fail without a success before it is disabled.
	DefaultGiveUpAfter = 72 * time.Hour
	// DefaultConcurrency is how many attempts one worker has in flight.
	// A receiver that hangs holds a slot for RequestTimeout at most, and
	// holds no more than the per-endpoint and per-account shares of them.
	DefaultConcurrency = 32
	// DefaultPerEndpoint is how many attempts one endpoint has in flight,
	// across workers.
	DefaultPerEndpoint = 2
	// RequestTimeout is the whole of one attempt: a 2xx within it is success.
	RequestTimeout = 10 * time.Second
	// maxResponseBytes of a response are read (and discarded) so the
	// connection can be reused; a receiver cannot make the worker read more.
	maxResponseBytes = 4 << 10
	// DefaultLease is how long a claimed delivery is the claimer's: longer
	// than an attempt, so that only a worker that died leaves it to another.
	DefaultLease = 3 * RequestTimeout
)

// DelivererOptions configure a Deliverer; zero values take the defaults.
type DelivererOptions struct {
	Allow        Allow
	Logger       *slog.Logger
	PollInterval time.Duration
	// RetryBase is the pause after the first failure, doubled after each
	// further one up to RetryMax.
	RetryBase   time.Duration
	RetryMax    time.Duration
	GiveUpAfter time.Duration
	Concurrency int
	// PerEndpoint bounds the attempts in flight to one endpoint, and
	// PerAccount to one account's endpoints together (Concurrency/4 by
	// default), so that one account's slow or dead receivers never take
	// the slots another account's events need.
	PerEndpoint int
	PerAccount  int
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
	// Telemetry traces each attempt (trace.go); nil traces none.
	Telemetry *telemetry.Provider
}

// Deliverer sends due deliveries. Several may run against one database:
// each claims its deliveries with FOR UPDATE SKIP LOCKED (claim.go).
type Deliverer struct {
	pool   *pgxpool.Pool
	sealer *seal.Sealer
	opts   DelivererOptions
	client *http.Client
	now    func() time.Time
	// tracer starts the attempts' spans when tracing is on.
	tracer  trace.Tracer
	tracing bool
}

// NewDeliverer returns a deliverer over pool; sealer opens the endpoints'
// signing secrets (the API's sealer: both derive it from BROLL_SIGNING_KEY).
func NewDeliverer(pool *pgxpool.Pool, sealer *seal.Sealer, opts DelivererOptions) *Deliverer {
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
	if opts.PerEndpoint <= 0 {
		opts.PerEndpoint = DefaultPerEndpoint
	}
	if opts.PerAccount <= 0 {
		opts.PerAccount = max(1, opts.Concurrency/4)
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
	return &Deliverer{pool: pool, sealer: sealer, opts: opts, now: time.Now,
		tracer: opts.Telemetry.Tracer("broll/webhook"), tracing: opts.Telemetry.On(), client: &http.Client{
			Transport: rt,
			Timeout:   RequestTimeout,
			// A redirect is an answer, not a 2xx: never follow it anywhere.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}}
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

func (d *Deliverer) send(ctx context.Context, c claimed) (r result) {
	ctx, span := d.startAttempt(ctx, c)
	defer func() { endAttempt(span, r) }()
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
	d.setTraceparent(ctx, req, c)
	resp, err := d.client.Do(req)
	dur := d.now().Sub(start)
	if err != nil {
		return result{duration: dur, err: describe(err)}
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponseBytes))
	_ = resp.Body.Close()
	r = result{status: resp.StatusCode, duration: dur}
	if !r.ok() {
		r.err = "http " + strconv.Itoa(resp.StatusCode)
	}
	return r
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

func (d *Deliverer) record(ctx context.Context, c claimed, r result) error {
	var status *int
	if r.status != 0 {
		status = &r.status
	}
	_, err := d.pool.Exec(ctx, recordSQL, c.id, c.endpoint, status, int(r.duration.Milliseconds()), r.err, r.ok(),
		d.backoff(c.attempts), d.opts.GiveUpAfter, humanDuration(d.opts.GiveUpAfter), c.attempts)
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

// Lag is how long the most overdue pending delivery of an enabled endpoint
// has waited past its due time (0 when none is due): one step down the
// partial index of pending deliveries, cheap enough for every scrape.
func (d *Deliverer) Lag(ctx context.Context) (time.Duration, error) {
	var secs float64
	if err := d.pool.QueryRow(ctx, lagSQL).Scan(&secs); err != nil {
		return 0, fmt.Errorf("webhook delivery lag: %w", err)
	}
	return time.Duration(secs * float64(time.Second)), nil
}
