package testkit

import (
	"bytes"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Metrics is a parsed /metrics page.
type Metrics map[string]*dto.MetricFamily

// ParseMetrics parses the Prometheus text format, failing the test on any
// syntax error.
func ParseMetrics(t testing.TB, text []byte) Metrics {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		t.Fatalf("not the Prometheus text format: %v", err)
	}
	return fams
}

// Value sums the series of family whose labels include want: counter and
// gauge values, histogram sample counts. found is false when no series
// matches.
func (m Metrics) Value(family string, want map[string]string) (sum float64, found bool) {
next:
	for _, s := range m[family].GetMetric() {
		have := map[string]string{}
		for _, l := range s.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		found = true
		switch {
		case s.Counter != nil:
			sum += s.GetCounter().GetValue()
		case s.Gauge != nil:
			sum += s.GetGauge().GetValue()
		case s.Histogram != nil:
			sum += float64(s.GetHistogram().GetSampleCount())
		}
	}
	return sum, found
}
