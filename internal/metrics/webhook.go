package metrics

import (
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
	return func(outcome string, took time.Duration) {
		attempts.WithLabelValues(outcome).Inc()
		latency.WithLabelValues(outcome).Observe(took.Seconds())
	}
}
