package cluster

import (
	"bytes"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape reads a process's /metrics.
func scrape(t *testing.T, base string) map[string]*dto.MetricFamily {
	t.Helper()
	r := call(t, base, "GET", "/metrics", "", nil)
	if r.status != 200 {
		t.Fatalf("%s/metrics: %d", base, r.status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(r.raw))
	if err != nil {
		t.Fatalf("%s/metrics: %v", base, err)
	}
	return fams
}

// value sums the counters and gauges of family whose labels include want.
func value(fams map[string]*dto.MetricFamily, family string, want map[string]string) float64 {
	sum := 0.0
next:
	for _, m := range fams[family].GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
	}
	return sum
}
