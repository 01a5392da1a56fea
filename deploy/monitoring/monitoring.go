// Package monitoring holds the service's Grafana dashboard
// (grafana/broll.json) and Prometheus alerting rules (alerts.yml, with
// their unit tests in alerts_test.yml), and reads the PromQL out of them
// for the tests that check them: promtool here, the metric names against
// running nodes in deploy/cluster, the PrometheusRule in deploy.
package monitoring

import (
	"embed"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

//go:embed alerts.yml grafana/broll.json
var files embed.FS

// Rules is a Prometheus rules file: alerts.yml, and the spec of the
// PrometheusRule that carries the same groups.
type Rules struct {
	Groups []RuleGroup `json:"groups"`
}

// RuleGroup is one group of alerting rules.
type RuleGroup struct {
	Name  string `json:"name"`
	Rules []Rule `json:"rules"`
}

// Rule is one alerting rule.
type Rule struct {
	Alert       string            `json:"alert"`
	Expr        string            `json:"expr"`
	For         string            `json:"for,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// AlertRules decodes alerts.yml strictly: a misspelt key is an error.
func AlertRules() (Rules, error) {
	raw, err := files.ReadFile("alerts.yml")
	if err != nil {
		return Rules{}, err
	}
	var r Rules
	if err := yaml.UnmarshalStrict(raw, &r); err != nil {
		return Rules{}, fmt.Errorf("alerts.yml: %w", err)
	}
	return r, nil
}

// Dashboard is the part of Grafana's dashboard model the checks read.
type Dashboard struct {
	Title         string  `json:"title"`
	UID           string  `json:"uid"`
	SchemaVersion int     `json:"schemaVersion"`
	Panels        []Panel `json:"panels"`
	Templating    struct {
		List []struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Query string `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

// Panel is a dashboard panel (a row holds none of its own queries).
type Panel struct {
	ID         int         `json:"id"`
	Type       string      `json:"type"`
	Title      string      `json:"title"`
	Datasource *Datasource `json:"datasource"`
	Targets    []struct {
		RefID      string      `json:"refId"`
		Expr       string      `json:"expr"`
		Datasource *Datasource `json:"datasource"`
	} `json:"targets"`
	Panels []Panel `json:"panels"`
}

// Datasource is a panel's or query's data source reference.
type Datasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

// LoadDashboard decodes grafana/broll.json.
func LoadDashboard() (Dashboard, error) {
	raw, err := files.ReadFile("grafana/broll.json")
	if err != nil {
		return Dashboard{}, err
	}
	var d Dashboard
	if err := json.Unmarshal(raw, &d); err != nil {
		return Dashboard{}, fmt.Errorf("grafana/broll.json: %w", err)
	}
	return d, nil
}

// Query is one PromQL expression and where it is written.
type Query struct {
	Where string
	Expr  string
}

// Queries lists every alert's expression and every dashboard query.
func Queries() ([]Query, error) {
	rules, err := AlertRules()
	if err != nil {
		return nil, err
	}
	d, err := LoadDashboard()
	if err != nil {
		return nil, err
	}
	var out []Query
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			out = append(out, Query{Where: "alerts.yml: " + r.Alert, Expr: r.Expr})
		}
	}
	var walk func([]Panel)
	walk = func(panels []Panel) {
		for _, p := range panels {
			for _, t := range p.Targets {
				out = append(out, Query{Where: fmt.Sprintf("grafana/broll.json: panel %q, query %s", p.Title, t.RefID), Expr: t.Expr})
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return out, nil
}

var (
	// Grafana's variables ($__rate_interval, ${datasource}) appear only in
	// ranges and label values here, both of which go before names are read.
	grafanaVar = regexp.MustCompile(`\$\{?\w+\}?`)
	quoted     = regexp.MustCompile("\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^'\\\\]|\\\\.)*'|`[^`]*`")
	matchers   = regexp.MustCompile(`\{[^{}]*\}`)
	ranges     = regexp.MustCompile(`\[[^\[\]]*\]`)
	// Label lists of aggregations and vector matching.
	labelLists = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)`)
	identifier = regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*`)
	// keywords are PromQL's words that are neither metrics nor called.
	keywords = []string{"and", "or", "unless", "bool", "offset", "inf", "nan", "by", "without", "on", "ignoring",
		"group_left", "group_right"}
)

// MetricNames returns the metric names an expression selects, sorted and
// without repeats: PromQL's strings, label matchers, ranges and label lists
// are taken out first, then every remaining identifier that is not called
// (a function or aggregation: followed by "("), not a keyword and not part
// of a number (1e3, 5m) is a metric name.
func MetricNames(expr string) []string {
	s := quoted.ReplaceAllString(expr, `""`)
	s = grafanaVar.ReplaceAllString(s, "1m")
	s = matchers.ReplaceAllString(s, " ")
	s = ranges.ReplaceAllString(s, " ")
	s = labelLists.ReplaceAllString(s, " ")
	var out []string
	for _, loc := range identifier.FindAllStringIndex(s, -1) {
		start, end := loc[0], loc[1]
		if start > 0 && strings.ContainsRune("0123456789.", rune(s[start-1])) {
			continue // the exponent or unit of a number
		}
		word := s[start:end]
		if slices.Contains(keywords, strings.ToLower(word)) {
			continue
		}
		if rest := strings.TrimLeft(s[end:], " \t\n"); strings.HasPrefix(rest, "(") {
			continue
		}
		if !slices.Contains(out, word) {
			out = append(out, word)
		}
	}
	slices.Sort(out)
	return out
}
