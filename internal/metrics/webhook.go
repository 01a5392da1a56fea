package metrics

import (
	"context"
	"math"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// WebhookDeliveries registers the webhook delivery metrics on reg and
// returns what the deliverer calls after each attempt
// (webhook.DelivererOptions.Observe) with its outcome: delivered (a 2xx),
// rejected (the endpoint answered another status) or failed (no answer:
// timeout, connection error, refused address).
func WebhookDeliveries(reg prometheus.Registerer) func(outcome string, took time.Duration) {
	attempts := CounterVec("webhook_delivery_attempts_total",
		"Webhook delivery attempts by outcome: delivered, rejected (the endpoint answered a non-2xx status) or failed (no answer).",
		"outcome")
	latency := HistogramVec("webhook_delivery_duration_seconds",
		"Time from sending a webhook to the endpoint's answer (or the failure), by outcome.",
		[]float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}, "outcome")
	reg.MustRegister(attempts, latency)
	// Every outcome from the start: a ratio over them reads 0, not "no data".
	for _, outcome := range []string{"delivered", "rejected", "failed"} {
		attempts.WithLabelValues(outcome)
		latency.WithLabelValues(outcome)
	}
	return func(outcome string, took time.Duration) {
		attempts.WithLabelValues(outcome).Inc()
		latency.WithLabelValues(outcome).Observe(took.Seconds())
	}
}

// WebhookLag registers broll_webhook_delivery_lag_seconds, read at each
// scrape from lag (webhook.Deliverer.Lag): how long the most overdue
// delivery has waited past its due time, 0 when none is overdue. It grows
// when the deliverers fall behind or stop; a receiver that keeps failing
// shows in the attempts' outcomes instead, its retries being scheduled.
func WebhookLag(reg prometheus.Registerer, lag func(context.Context) (time.Duration, error)) {
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: Namespace,
		Name:      "webhook_delivery_lag_seconds",
		Help:      "How long the most overdue pending webhook delivery has waited past its due time (0 when none is overdue; NaN when the database did not answer).",
	}, func() float64 {
		ctx, cancel := context.WithTimeout(context.Background(), dependencyTimeout)
		defer cancel()
		d, err := lag(ctx)
		if err != nil {
			return math.NaN()
		}
		return d.Seconds()
	}))
}
