package monitoring_test

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"broll/deploy/monitoring"
)

// promtool finds Prometheus' rules checker: BROLL_TEST_PROMTOOL (written to
// the stack's env file by deploy/local/stack.sh, which builds it at a
// pinned version), then PATH.
func promtool(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("BROLL_TEST_PROMTOOL"); p != "" {
		return p
	}
	if p, err := exec.LookPath("promtool"); err == nil {
		return p
	}
	t.Fatal("promtool not found: run `bash deploy/local/stack.sh up` (it builds it) and load .stack/env")
	return ""
}

// TestPromtool: Prometheus' own checker accepts alerts.yml, and the rules'
// unit tests (alerts_test.yml) pass.
func TestPromtool(t *testing.T) {
	t.Parallel()
	bin := promtool(t)
	for _, args := range [][]string{
		{"check", "rules", "alerts.yml"},
		{"test", "rules", "alerts_test.yml"},
	} {
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// alertTests is the part of promtool's unit test format the coverage check reads.
type alertTests struct {
	Tests []struct {
		AlertRuleTest []struct {
			Alertname string           `json:"alertname"`
			ExpAlerts []map[string]any `json:"exp_alerts"`
		} `json:"alert_rule_test"`
	} `json:"tests"`
}

// TestEveryAlertUnitTested: alerts_test.yml has, for every alert, series on
// which it fires and series on which it stays quiet, and tests no alert
// that alerts.yml lacks.
func TestEveryAlertUnitTested(t *testing.T) {
	t.Parallel()
	rules, err := monitoring.AlertRules()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("alerts_test.yml")
	if err != nil {
		t.Fatal(err)
	}
	var tests alertTests
	if err := yaml.Unmarshal(raw, &tests); err != nil {
		t.Fatal(err)
	}
	fires, quiet := map[string]bool{}, map[string]bool{}
	for _, tc := range tests.Tests {
		for _, a := range tc.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				fires[a.Alertname] = true
			} else {
				quiet[a.Alertname] = true
			}
		}
	}
	var alerts []string
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			alerts = append(alerts, r.Alert)
			if !fires[r.Alert] || !quiet[r.Alert] {
				t.Errorf("alerts_test.yml: %s fires in a test: %v, stays quiet in one: %v; want both", r.Alert, fires[r.Alert], quiet[r.Alert])
			}
			if r.Labels["severity"] == "" || r.Annotations["summary"] == "" || r.For == "" {
				t.Errorf("alerts.yml: %s needs a severity label, a summary and a for duration", r.Alert)
			}
		}
	}
	if len(alerts) < 8 {
		t.Errorf("alerts.yml holds only %v", alerts)
	}
	for name := range fires {
		if !slices.Contains(alerts, name) {
			t.Errorf("alerts_test.yml tests %s, which alerts.yml does not define", name)
		}
	}
}

// TestDashboard: the dashboard chooses its Prometheus through a datasource
// variable that every panel and query uses, a current Grafana reads its
// schema, and every panel has a title and queries.
func TestDashboard(t *testing.T) {
	t.Parallel()
	d, err := monitoring.LoadDashboard()
	if err != nil {
		t.Fatal(err)
	}
	// Grafana 11 writes schema 39 and later; older ones migrate on load.
	if d.SchemaVersion < 39 || d.UID == "" || d.Title == "" {
		t.Errorf("dashboard schemaVersion %d uid %q title %q", d.SchemaVersion, d.UID, d.Title)
	}
	variable := false
	for _, v := range d.Templating.List {
		variable = variable || v.Name == "datasource" && v.Type == "datasource" && v.Query == "prometheus"
	}
	if !variable {
		t.Error("no datasource variable of type prometheus named datasource")
	}
	ids := map[int]bool{}
	panels := 0
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("panel id %d twice", p.ID)
		}
		ids[p.ID] = true
		if p.Type == "row" {
			continue
		}
		panels++
		if p.Title == "" || len(p.Targets) == 0 {
			t.Errorf("panel %d: title %q, %d queries", p.ID, p.Title, len(p.Targets))
		}
		if p.Datasource == nil || p.Datasource.UID != "${datasource}" {
			t.Errorf("panel %q does not use the datasource variable: %+v", p.Title, p.Datasource)
		}
		for _, q := range p.Targets {
			if q.Datasource == nil || q.Datasource.UID != "${datasource}" || strings.TrimSpace(q.Expr) == "" || q.RefID == "" {
				t.Errorf("panel %q query %q: datasource %+v, expr %q", p.Title, q.RefID, q.Datasource, q.Expr)
			}
		}
	}
	if panels < 15 {
		t.Errorf("the dashboard has %d panels", panels)
	}
}

// TestMetricNames: the names an expression selects, without its functions,
// aggregations, label names, label values, ranges, numbers and keywords.
func TestMetricNames(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		expr string
		want []string
	}{
		{`up`, []string{"up"}},
		{`sum by (route) (rate(broll_http_requests_total{status=~"5..", route!="x_total"}[5m]))`,
			[]string{"broll_http_requests_total"}},
		{`sum(rate(a_total[$__rate_interval])) / sum(rate(b_total[${interval}])) > 0.01`, []string{"a_total", "b_total"}},
		{"histogram_quantile(0.99, sum by (le) (rate(h_bucket{le=\"+Inf\"}[5m] offset 1h)))", []string{"h_bucket"}},
		{`max by (queue) (asynq_queue_latency_seconds) > 6e2 and on (queue) q_size unless ignoring (x) r`,
			[]string{"asynq_queue_latency_seconds", "q_size", "r"}},
		{`absent(broll_build_info)`, []string{"broll_build_info"}},
		{`a / on (instance) group_left (version) b == bool 1 or vector(0)`, []string{"a", "b"}},
		{`sum without (instance) (c) * inf`, []string{"c"}},
		{`rate(d{job='ab(c)'}[5m]) + e `, []string{"d", "e"}},
	} {
		if got := monitoring.MetricNames(c.expr); !slices.Equal(got, c.want) {
			t.Errorf("MetricNames(%q) = %v, want %v", c.expr, got, c.want)
		}
	}
}

// TestQueries: every alert and every panel query names at least one metric.
func TestQueries(t *testing.T) {
	t.Parallel()
	qs, err := monitoring.Queries()
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) < 30 {
		t.Errorf("%d queries", len(qs))
	}
	for _, q := range qs {
		if len(monitoring.MetricNames(q.Expr)) == 0 {
			t.Errorf("%s: no metric in %q", q.Where, q.Expr)
		}
	}
}
