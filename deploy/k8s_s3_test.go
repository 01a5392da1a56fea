package deploy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// s3Overlay runs the service on the s3 media store: the base without the
// media claim and its mounts, with the store's settings.
const s3Overlay = "overlays/s3"

const mediaClaim = "broll-media"

// withoutDirectives drops strategic-merge directives ($patch, $retainKeys,
// ...), which no Kubernetes type has, so that a patch decodes strictly as a
// partial object of its kind.
func withoutDirectives(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if strings.HasPrefix(k, "$") {
				delete(v, k)
				continue
			}
			v[k] = withoutDirectives(e)
		}
	case []any:
		for i, e := range v {
			v[i] = withoutDirectives(e)
		}
	}
	return v
}

// TestK8sS3OverlayFiles: the overlay's kustomization lists only files that
// exist and every file it holds; each patch decodes strictly as a partial
// object of its kind and names an object of the base.
func TestK8sS3OverlayFiles(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(s3Overlay, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	k := strict[kustomization](t, "overlays/s3/kustomization.yaml", raw)
	if k.APIVersion != "kustomize.config.k8s.io/v1beta1" || k.Kind != "Kustomization" || k.Namespace != "" {
		t.Errorf("overlays/s3/kustomization.yaml is %s %s namespace %q", k.APIVersion, k.Kind, k.Namespace)
	}
	if !slices.Equal(k.Resources, []string{"../../k8s"}) {
		t.Errorf("overlays/s3 builds on %v, want the base ../../k8s alone", k.Resources)
	}
	for _, r := range k.Resources {
		if _, err := os.Stat(filepath.Join(s3Overlay, r, "kustomization.yaml")); err != nil {
			t.Errorf("overlays/s3 lists resource %s: %v", r, err)
		}
	}
	var listed []string
	for _, p := range k.Patches {
		listed = append(listed, p.Path)
	}
	files, err := filepath.Glob(filepath.Join(s3Overlay, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range files {
		if base := filepath.Base(n); base != "kustomization.yaml" && !slices.Contains(listed, base) {
			t.Errorf("overlays/s3/%s is not among the kustomization's patches", base)
		}
	}
	base := loadCluster(t)
	for _, file := range listed {
		raw, err := os.ReadFile(filepath.Join(s3Overlay, file))
		if err != nil {
			t.Errorf("overlays/s3 lists patch %s: %v", file, err)
			continue
		}
		for _, doc := range yamlDocs(raw) {
			var tree any
			if err := yaml.Unmarshal(doc, &tree); err != nil {
				t.Fatalf("overlays/s3/%s: %v", file, err)
			}
			clean, err := json.Marshal(withoutDirectives(tree))
			if err != nil {
				t.Fatal(err)
			}
			part := newCluster()
			part.add(t, "overlays/s3/"+file, clean)
			for _, n := range names(part) {
				if !slices.Contains(names(base), n) {
					t.Errorf("overlays/s3/%s patches %s, which the base lacks", file, n)
				}
			}
		}
	}
}

// names lists a cluster's objects as kind/name.
func names(c *cluster) []string {
	out := slices.Concat(named("configmap", c.configMaps), named("secret", c.secrets),
		named("pvc", c.pvcs), named("svc", c.services), named("deploy", c.deployments),
		named("job", c.jobs), named("hpa", c.hpas), named("pdb", c.pdbs))
	slices.Sort(out)
	return out
}

func named[T any](kind string, objects map[string]*T) []string {
	var out []string
	for n := range objects {
		out = append(out, kind+"/"+n)
	}
	return out
}

// buildS3Overlay runs kustomize over the overlay, as `kubectl apply -k`
// would, and decodes its output strictly, plus the example Secret, which
// no kustomization applies.
func buildS3Overlay(t *testing.T) (*cluster, []byte) {
	t.Helper()
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), s3Overlay)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", s3Overlay, err)
	}
	out, err := m.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	c := newCluster()
	c.add(t, "kustomize build overlays/s3", out)
	sec, err := os.ReadFile(filepath.Join(k8sDir, secretExample))
	if err != nil {
		t.Fatal(err)
	}
	c.add(t, secretExample, sec)
	return c, out
}

// TestK8sS3OverlayBuild: the built overlay holds every object of the base
// but the media claim, loads on the s3 store with its keys from the
// Secret, and differs from the base in nothing but the media volume.
func TestK8sS3OverlayBuild(t *testing.T) {
	c, _ := buildS3Overlay(t)
	base := loadCluster(t)
	want := slices.DeleteFunc(names(base), func(n string) bool { return n == "pvc/"+mediaClaim })
	if got := names(c); !slices.Equal(got, want) {
		t.Errorf("the overlay builds %v, want the base's objects but the claim: %v", got, want)
	}
	cfg := k8sConfig(t, c)
	if cfg.MediaStore != "s3" || cfg.S3.Endpoint == "" || cfg.S3.Bucket == "" {
		t.Errorf("the overlay's pods load store %q at %q bucket %q, want s3", cfg.MediaStore, cfg.S3.Endpoint, cfg.S3.Bucket)
	}
	cm, sec := c.configMaps[configMapName], c.secrets[secretName]
	for _, k := range []string{"BROLL_S3_ACCESS_KEY", "BROLL_S3_SECRET_KEY"} {
		if _, ok := cm.Data[k]; ok {
			t.Errorf("%s is in the ConfigMap; it is a credential and belongs in the Secret", k)
		}
		if _, ok := sec.StringData[k]; !ok {
			t.Errorf("the example Secret lacks %s, which the s3 store requires", k)
		}
	}
	known := knownEnv(t)
	for k := range cm.Data {
		if !known[k] {
			t.Errorf("the overlay's ConfigMap sets %s, which internal/config does not read", k)
		}
	}

	// Apart from the media volume and the registry the images entries set,
	// every Deployment and Job is the base's own: probes, security context,
	// resources and images stay as the base tests check them.
	for name, d := range base.deployments {
		wantSpec := *d.Spec.Template.Spec.DeepCopy()
		dropMedia(&wantSpec, mediaClaim)
		for i := range wantSpec.Containers {
			wantSpec.Containers[i].Image = "registry.example.com/" + wantSpec.Containers[i].Image + ":1.0.0"
		}
		got := c.deployments[name]
		if got == nil {
			continue
		}
		if !equality.Semantic.DeepEqual(got.Spec.Template.Spec, wantSpec) {
			t.Errorf("deployment %s differs from the base beyond its media volume:\n got %+v\nwant %+v", name, got.Spec.Template.Spec, wantSpec)
		}
		if !equality.Semantic.DeepEqual(withoutPod(got.Spec), withoutPod(d.Spec)) {
			t.Errorf("deployment %s: the overlay changes more than its pods' media volume", name)
		}
	}
}

func withoutPod(s appsv1.DeploymentSpec) appsv1.DeploymentSpec {
	s.Template.Spec = corev1.PodSpec{}
	return s
}

// dropMedia removes the volumes of the claim and their mounts from a pod.
func dropMedia(spec *corev1.PodSpec, claim string) {
	var dropped []string
	spec.Volumes = slices.DeleteFunc(spec.Volumes, func(v corev1.Volume) bool {
		if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == claim {
			dropped = append(dropped, v.Name)
			return true
		}
		return false
	})
	for i := range spec.Containers {
		spec.Containers[i].VolumeMounts = slices.DeleteFunc(spec.Containers[i].VolumeMounts, func(m corev1.VolumeMount) bool {
			return slices.Contains(dropped, m.Name)
		})
	}
}

// TestK8sS3OverlayNoClaim: nothing the overlay applies names the media
// claim or mounts anything at BROLL_MEDIA_DIR, so a cluster without
// ReadWriteMany storage runs it, and every mount names a volume of its pod.
func TestK8sS3OverlayNoClaim(t *testing.T) {
	c, out := buildS3Overlay(t)
	if strings.Contains(string(out), "claimName") || strings.Contains(string(out), "PersistentVolumeClaim") {
		t.Errorf("the built overlay still refers to a claim:\n%s", out)
	}
	if len(c.pvcs) > 0 {
		t.Errorf("the overlay applies claims %v", names(c))
	}
	cfg := k8sConfig(t, c)
	for _, ps := range c.podSpecs() {
		volumes := map[string]corev1.Volume{}
		for _, v := range ps.spec.Volumes {
			volumes[v.Name] = v
			if v.PersistentVolumeClaim != nil {
				t.Errorf("%s: volume %s is claim %s", ps.owner, v.Name, v.PersistentVolumeClaim.ClaimName)
			}
		}
		for _, ctr := range ps.spec.Containers {
			for _, m := range ctr.VolumeMounts {
				if _, ok := volumes[m.Name]; !ok {
					t.Errorf("%s/%s mounts %s, which is no volume of the pod", ps.owner, ctr.Name, m.Name)
				}
				if m.MountPath == cfg.MediaDir || strings.HasPrefix(m.MountPath, cfg.MediaDir+"/") {
					t.Errorf("%s/%s mounts %s at %s; the s3 store keeps no media on a volume", ps.owner, ctr.Name, m.Name, m.MountPath)
				}
			}
		}
	}
}
