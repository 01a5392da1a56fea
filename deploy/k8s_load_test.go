package deploy

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

const k8sDir = "k8s"

// secretExample is the one manifest kustomization.yaml leaves out on
// purpose: applying it would overwrite real credentials with placeholders.
const secretExample = "secret.example.yaml"

// cluster is every object of deploy/k8s, decoded into the real Kubernetes
// types, keyed by name.
type cluster struct {
	configMaps  map[string]*corev1.ConfigMap
	secrets     map[string]*corev1.Secret
	pvcs        map[string]*corev1.PersistentVolumeClaim
	services    map[string]*corev1.Service
	deployments map[string]*appsv1.Deployment
	jobs        map[string]*batchv1.Job
	hpas        map[string]*autoscalingv2.HorizontalPodAutoscaler
	pdbs        map[string]*policyv1.PodDisruptionBudget
}

// kustomization is the part of kustomize's format the manifests use; the
// strict decode refuses anything else, so a misspelt key fails here too.
type kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Namespace  string   `json:"namespace,omitempty"`
	Resources  []string `json:"resources"`
	// Patches are an overlay's strategic-merge patches, one file each.
	Patches []struct {
		Path string `json:"path"`
	} `json:"patches,omitempty"`
	Images []struct {
		Name    string `json:"name"`
		NewName string `json:"newName,omitempty"`
		NewTag  string `json:"newTag,omitempty"`
	} `json:"images,omitempty"`
}

// apiVersions are the versions the manifests must use for each kind: the
// strict decode checks fields, not the version a cluster will read them as.
var apiVersions = map[string]string{
	"ConfigMap": "v1", "Secret": "v1", "PersistentVolumeClaim": "v1", "Service": "v1",
	"Deployment": "apps/v1", "Job": "batch/v1",
	"HorizontalPodAutoscaler": "autoscaling/v2", "PodDisruptionBudget": "policy/v1",
}

func manifestFiles(t *testing.T) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(k8sDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range names {
		if base := filepath.Base(n); base != "kustomization.yaml" {
			out = append(out, base)
		}
	}
	if len(out) < 8 {
		t.Fatalf("deploy/k8s holds only %v", out)
	}
	return out
}

// strict decodes one document, refusing unknown and duplicated fields.
func strict[T any](t *testing.T, file string, doc []byte) *T {
	t.Helper()
	var v T
	if err := yaml.UnmarshalStrict(doc, &v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return &v
}

func newCluster() *cluster {
	return &cluster{
		configMaps: map[string]*corev1.ConfigMap{}, secrets: map[string]*corev1.Secret{},
		pvcs: map[string]*corev1.PersistentVolumeClaim{}, services: map[string]*corev1.Service{},
		deployments: map[string]*appsv1.Deployment{}, jobs: map[string]*batchv1.Job{},
		hpas: map[string]*autoscalingv2.HorizontalPodAutoscaler{}, pdbs: map[string]*policyv1.PodDisruptionBudget{},
	}
}

func loadCluster(t *testing.T) *cluster {
	t.Helper()
	c := newCluster()
	for _, file := range manifestFiles(t) {
		raw, err := os.ReadFile(filepath.Join(k8sDir, file))
		if err != nil {
			t.Fatal(err)
		}
		c.add(t, file, raw)
	}
	return c
}

// yamlDocs splits a multi-document YAML stream, leaving out documents that
// hold only comments.
func yamlDocs(raw []byte) [][]byte {
	var out [][]byte
	for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(raw), -1) {
		if strings.TrimSpace(regexp.MustCompile(`(?m)^\s*#.*$`).ReplaceAllString(doc, "")) == "" {
			continue
		}
		out = append(out, []byte(doc))
	}
	return out
}

// kindOf reads a document's kind and checks its apiVersion.
func kindOf(t *testing.T, file string, doc []byte) string {
	t.Helper()
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if want, ok := apiVersions[tm.Kind]; !ok {
		t.Fatalf("%s: kind %q is not one the deployment uses", file, tm.Kind)
	} else if tm.APIVersion != want {
		t.Errorf("%s: %s has apiVersion %q, want %q", file, tm.Kind, tm.APIVersion, want)
	}
	return tm.Kind
}

// put decodes one document strictly and files it by its name.
func put[T any, P interface {
	*T
	GetName() string
}](t *testing.T, objects map[string]*T, file string, doc []byte) {
	t.Helper()
	o := strict[T](t, file, doc)
	objects[P(o).GetName()] = o
}

// add decodes every document of raw strictly into its Kubernetes type.
func (c *cluster) add(t *testing.T, file string, raw []byte) {
	t.Helper()
	for _, b := range yamlDocs(raw) {
		switch kindOf(t, file, b) {
		case "ConfigMap":
			put(t, c.configMaps, file, b)
		case "Secret":
			put(t, c.secrets, file, b)
		case "PersistentVolumeClaim":
			put(t, c.pvcs, file, b)
		case "Service":
			put(t, c.services, file, b)
		case "Deployment":
			put(t, c.deployments, file, b)
		case "Job":
			put(t, c.jobs, file, b)
		case "HorizontalPodAutoscaler":
			put(t, c.hpas, file, b)
		case "PodDisruptionBudget":
			put(t, c.pdbs, file, b)
		}
	}
}

func loadKustomization(t *testing.T) kustomization {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(k8sDir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return *strict[kustomization](t, "kustomization.yaml", raw)
}

// TestKustomizationListsEveryManifest: a manifest missing from the list is
// silently never applied.
func TestKustomizationListsEveryManifest(t *testing.T) {
	k := loadKustomization(t)
	if k.APIVersion != "kustomize.config.k8s.io/v1beta1" || k.Kind != "Kustomization" {
		t.Errorf("kustomization.yaml is %s %s", k.APIVersion, k.Kind)
	}
	if k.Namespace != "" {
		t.Errorf("kustomization.yaml pins namespace %q; the manifests are namespace-agnostic", k.Namespace)
	}
	for _, f := range manifestFiles(t) {
		listed := slices.Contains(k.Resources, f)
		switch {
		case f == secretExample && listed:
			t.Errorf("%s is listed: applying it would replace the real secret with placeholders", f)
		case f != secretExample && !listed:
			t.Errorf("%s is not in kustomization.yaml resources", f)
		}
	}
	for _, r := range k.Resources {
		if _, err := os.Stat(filepath.Join(k8sDir, r)); err != nil {
			t.Errorf("kustomization.yaml lists %s: %v", r, err)
		}
	}
	// Every container of ours says `image: broll`, the worker's `image:
	// broll-worker` (the image with ffmpeg); the images entries are what
	// point them at a registry.
	c := loadCluster(t)
	for _, name := range []string{"broll", "broll-worker"} {
		found := false
		for _, img := range k.Images {
			found = found || img.Name == name && img.NewName != "" && img.NewTag != ""
		}
		if !found {
			t.Errorf("kustomization.yaml has no images entry for %s: %+v", name, k.Images)
		}
	}
	for _, ps := range c.podSpecs() {
		for _, ctr := range ps.spec.Containers {
			if want := podImage(ps.owner); ctr.Image != want {
				t.Errorf("%s/%s: image %q; use `%s` and let kustomization.yaml set the registry and tag", ps.owner, ctr.Name, ctr.Image, want)
			}
		}
	}
}

// podImage is the image name a pod's manifest says: the worker's has ffmpeg
// for media jobs, every other pod runs the static image.
func podImage(owner string) string {
	if owner == "deployment/"+workerName {
		return "broll-worker"
	}
	return "broll"
}

type ownedPodSpec struct {
	owner string
	meta  metav1.ObjectMeta
	spec  corev1.PodSpec
}

func (c *cluster) podSpecs() []ownedPodSpec {
	var out []ownedPodSpec
	for name, d := range c.deployments {
		out = append(out, ownedPodSpec{"deployment/" + name, d.Spec.Template.ObjectMeta, d.Spec.Template.Spec})
	}
	for name, j := range c.jobs {
		out = append(out, ownedPodSpec{"job/" + name, j.Spec.Template.ObjectMeta, j.Spec.Template.Spec})
	}
	return out
}

func metav1LabelSelector(s *metav1.LabelSelector) (labels.Selector, error) {
	return metav1.LabelSelectorAsSelector(s)
}
