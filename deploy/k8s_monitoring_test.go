package deploy

import (
	"reflect"
	"slices"
	"testing"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"broll/deploy/monitoring"
)

// monitoringOverlay adds the alerting rules, as a PrometheusRule of the
// Prometheus Operator, to the base; the base stays free of custom
// resources so that it applies on a cluster without the operator.
const monitoringOverlay = "overlays/monitoring"

// prometheusRule is the PrometheusRule (monitoring.coreos.com/v1) the
// overlay adds, decoded strictly: its spec is a rules file's groups.
type prometheusRule struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec monitoring.Rules `json:"spec"`
}

// TestK8sMonitoringOverlay: kustomize builds the overlay into the base's
// objects plus one PrometheusRule whose groups are exactly those of
// deploy/monitoring/alerts.yml, the rules promtool checks and tests: the
// plain file and the manifest are one set of rules.
func TestK8sMonitoringOverlay(t *testing.T) {
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), monitoringOverlay)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", monitoringOverlay, err)
	}
	out, err := m.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	c := newCluster()
	var rules []*prometheusRule
	for _, doc := range yamlDocs(out) {
		var kind struct {
			Kind string `json:"kind"`
		}
		if err := yaml.Unmarshal(doc, &kind); err != nil {
			t.Fatal(err)
		}
		if kind.Kind == "PrometheusRule" {
			rules = append(rules, strict[prometheusRule](t, "kustomize build "+monitoringOverlay, doc))
			continue
		}
		c.add(t, "kustomize build "+monitoringOverlay, doc)
	}
	// The example Secret is in no kustomization (secretExample).
	want := slices.DeleteFunc(names(loadCluster(t)), func(n string) bool { return n == "secret/"+secretName })
	if got := names(c); !slices.Equal(got, want) {
		t.Errorf("the overlay builds %v beside its rule, want the base's objects %v", got, want)
	}
	if len(rules) != 1 {
		t.Fatalf("the overlay builds %d PrometheusRules, want 1", len(rules))
	}
	r := rules[0]
	if r.APIVersion != "monitoring.coreos.com/v1" || r.Metadata.Name == "" {
		t.Errorf("PrometheusRule %s %q", r.APIVersion, r.Metadata.Name)
	}
	file, err := monitoring.AlertRules()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r.Spec, file) {
		a, _ := yaml.Marshal(r.Spec)
		b, _ := yaml.Marshal(file)
		t.Errorf("overlays/monitoring/prometheusrule.yaml's groups differ from deploy/monitoring/alerts.yml's; change both together.\nPrometheusRule:\n%s\nalerts.yml:\n%s", a, b)
	}
}
