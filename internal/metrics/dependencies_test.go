package metrics_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"

	"broll/internal/metrics"
	"broll/internal/testkit"
)

// TestDependencyUp: broll_dependency_up is 1 for a dependency whose check
// answers at the scrape and 0 for one whose check fails, here a real
// Postgres and Redis against a Redis address nothing listens on.
func TestDependencyUp(t *testing.T) {
	t.Parallel()
	pool, _ := testkit.NewPool(t)
	ks := testkit.Redis(t)
	reg := metrics.NewRegistry()
	metrics.Dependencies(reg, map[string]func(context.Context) error{
		"postgres": pool.Ping,
		"redis":    func(ctx context.Context) error { return ks.Client.Ping(ctx).Err() },
		"other":    func(context.Context) error { return errors.New("refused") },
	})
	scrape := func() testkit.Metrics {
		rec := httptest.NewRecorder()
		metrics.Handler(reg).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		return testkit.ParseMetrics(t, rec.Body.Bytes())
	}
	m := scrape()
	for dep, want := range map[string]float64{"postgres": 1, "redis": 1, "other": 0} {
		if got, ok := m.Value("broll_dependency_up", map[string]string{"dependency": dep}); !ok || got != want {
			t.Errorf("broll_dependency_up{dependency=%q} = %v (present %v), want %v", dep, got, ok, want)
		}
	}
	// The pool closed: Postgres no longer answers this process.
	pool.Close()
	if got, _ := scrape().Value("broll_dependency_up", map[string]string{"dependency": "postgres"}); got != 0 {
		t.Errorf("broll_dependency_up{dependency=postgres} after the pool closed = %v, want 0", got)
	}
}
