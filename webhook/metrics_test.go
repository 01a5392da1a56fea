package webhook_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"broll/internal/metrics"
	"broll/internal/outbox"
	"broll/internal/testkit"
	"broll/webhook"
)

// TestDeliveryMetrics: every attempt is counted and timed by its outcome,
// as the worker's /metrics serves them.
func TestDeliveryMetrics(t *testing.T) {
	t.Parallel()
	b := setup(t)
	reg := metrics.NewRegistry()
	d := webhook.NewDeliverer(b.pool, b.sealer, webhook.DelivererOptions{
		Allow: loopback(t), RetryBase: time.Millisecond, RetryMax: 5 * time.Millisecond,
		Observe: metrics.WebhookDeliveries(reg),
	})

	// Two 500s, then delivered.
	rcv := newReceiver(t)
	rcv.status = func(n int) int {
		if n <= 2 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	}
	subscribed(t, b, rcv, outbox.ClipsEmbedded, 1)
	b.drain(t, d)

	// An endpoint nobody listens on any more: no answer at all.
	gone := newReceiver(t)
	if _, err := b.hooks.Create(context.Background(), b.owner(),
		webhook.NewEndpoint{URL: gone.URL, Events: []string{outbox.KeyCreated}}); err != nil {
		t.Fatal(err)
	}
	gone.Close()
	writeEvents(t, b, 1, outbox.KeyCreated)
	if n, err := d.DeliverDue(context.Background()); err != nil || n != 1 {
		t.Fatalf("deliver to a closed port: %d %v", n, err)
	}

	rec := httptest.NewRecorder()
	metrics.Handler(reg).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	fams := testkit.ParseMetrics(t, rec.Body.Bytes())
	for _, c := range []struct {
		name    string
		outcome string
		want    float64
	}{
		{"broll_webhook_delivery_attempts_total", "delivered", 1},
		{"broll_webhook_delivery_attempts_total", "rejected", 2},
		{"broll_webhook_delivery_attempts_total", "failed", 1},
		{"broll_webhook_delivery_duration_seconds", "delivered", 1},
		{"broll_webhook_delivery_duration_seconds", "rejected", 2},
		{"broll_webhook_delivery_duration_seconds", "failed", 1},
	} {
		if got, ok := fams.Value(c.name, map[string]string{"outcome": c.outcome}); !ok || got != c.want {
			t.Errorf("%s{outcome=%s} = %v (present %v), want %v", c.name, c.outcome, got, ok, c.want)
		}
	}
}

// TestDeliveryLagMetric: broll_webhook_delivery_lag_seconds is how long the
// most overdue delivery has waited past its due time, and 0 once nothing
// due is left.
func TestDeliveryLagMetric(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	reg := metrics.NewRegistry()
	d := webhook.NewDeliverer(b.pool, b.sealer, webhook.DelivererOptions{
		Allow: loopback(t), RetryBase: time.Millisecond, RetryMax: 5 * time.Millisecond,
		Observe: metrics.WebhookDeliveries(reg),
	})
	metrics.WebhookLag(reg, d.Lag)
	lag := func() float64 {
		t.Helper()
		rec := httptest.NewRecorder()
		metrics.Handler(reg).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		v, ok := testkit.ParseMetrics(t, rec.Body.Bytes()).Value("broll_webhook_delivery_lag_seconds", nil)
		if !ok {
			t.Fatalf("no broll_webhook_delivery_lag_seconds in\n%s", rec.Body.String())
		}
		return v
	}
	if got := lag(); got != 0 {
		t.Fatalf("lag with nothing pending = %v, want 0", got)
	}

	rcv := newReceiver(t)
	subscribed(t, b, rcv, outbox.ClipsEmbedded, 2)
	// One delivery due ten minutes ago, one not yet due: only the first counts.
	if _, err := b.pool.Exec(ctx, `UPDATE webhook_deliveries SET next_attempt_at = now() + interval '1 hour'`); err != nil {
		t.Fatal(err)
	}
	if _, err := b.pool.Exec(ctx, `UPDATE webhook_deliveries SET next_attempt_at = now() - interval '10 minutes'
		WHERE id = (SELECT min(id) FROM webhook_deliveries)`); err != nil {
		t.Fatal(err)
	}
	if got := lag(); got < 600 || got > 660 {
		t.Fatalf("lag with a delivery 10 minutes overdue = %v, want about 600", got)
	}
	if _, err := b.pool.Exec(ctx, `UPDATE webhook_deliveries SET next_attempt_at = now()`); err != nil {
		t.Fatal(err)
	}
	b.drain(t, d)
	if got := lag(); got != 0 {
		t.Fatalf("lag after every delivery went out = %v, want 0", got)
	}
}
