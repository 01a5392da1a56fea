package metrics_test

import (
	"net/http/httptest"
	"testing"

	"broll/internal/metrics"
	"broll/internal/testkit"
)

// TestWebhookOutcomesFromStart: the delivery outcomes are served at 0
// before the first attempt, so that the failing-endpoints ratio and the
// dashboard's success ratio read from a fresh worker.
func TestWebhookOutcomesFromStart(t *testing.T) {
	t.Parallel()
	reg := metrics.NewRegistry()
	metrics.WebhookDeliveries(reg)
	rec := httptest.NewRecorder()
	metrics.Handler(reg).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	m := testkit.ParseMetrics(t, rec.Body.Bytes())
	for _, family := range []string{"broll_webhook_delivery_attempts_total", "broll_webhook_delivery_duration_seconds"} {
		for _, outcome := range []string{"delivered", "rejected", "failed"} {
			if v, ok := m.Value(family, map[string]string{"outcome": outcome}); !ok || v != 0 {
				t.Errorf("%s{outcome=%q} = %v (present %v), want 0 from the start", family, outcome, v, ok)
			}
		}
	}
}
