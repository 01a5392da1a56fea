package worker_test

import (
	"net/http/httptest"
	"testing"

	"broll/internal/metrics"
	"broll/internal/testkit"
	"broll/worker"
)

// TestOutcomeSeriesFromStart: the licence stamp and preview outcomes are
// served at 0 before the first job, so that a dashboard's rate and an
// alert's ratio over them read 0 on a fresh worker, not "no data".
func TestOutcomeSeriesFromStart(t *testing.T) {
	t.Parallel()
	reg := metrics.NewRegistry()
	worker.RegisterMetrics(reg)
	rec := httptest.NewRecorder()
	metrics.Handler(reg).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	m := testkit.ParseMetrics(t, rec.Body.Bytes())
	for family, results := range map[string][]string{
		"broll_license_stamp_jobs_total": {"stamped", "current", "not_needed", "unsupported", "revoked", "retry", "failed", "gone", "interrupted"},
		"broll_preview_jobs_total":       {"done", "retry", "failed"},
	} {
		for _, r := range results {
			if v, ok := m.Value(family, map[string]string{"result": r}); !ok || v != 0 {
				t.Errorf("%s{result=%q} = %v (present %v), want 0 from the start", family, r, v, ok)
			}
		}
	}
}
