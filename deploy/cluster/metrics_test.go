package cluster

import (
	"testing"

	"broll/internal/testkit"
)

// scrape reads a process's /metrics.
func scrape(t *testing.T, base string) testkit.Metrics {
	t.Helper()
	r := call(t, base, "GET", "/metrics", "", nil)
	if r.status != 200 {
		t.Fatalf("%s/metrics: %d", base, r.status)
	}
	return testkit.ParseMetrics(t, r.raw)
}

// value is the sum of family's series whose labels include want.
func value(m testkit.Metrics, family string, want map[string]string) float64 {
	v, _ := m.Value(family, want)
	return v
}
