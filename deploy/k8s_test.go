package deploy

import (
	"net"
	"strconv"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	"broll/internal/config"
)

const (
	apiName       = "broll-api"
	workerName    = "broll-worker"
	migrateName   = "broll-migrate"
	configMapName = "broll-config"
	secretName    = "broll-secrets"
)

// k8sConfig is the configuration every pod loads: the ConfigMap plus the
// Secret's keys, its placeholder secrets replaced as an operator would.
func k8sConfig(t *testing.T, c *cluster) config.Config {
	t.Helper()
	cm, sec := c.configMaps[configMapName], c.secrets[secretName]
	if cm == nil || sec == nil {
		t.Fatalf("want ConfigMap %s and Secret %s", configMapName, secretName)
	}
	env := map[string]string{}
	for k, v := range cm.Data {
		env[k] = v
	}
	for k, v := range sec.StringData {
		env[k] = v
	}
	// The example's secrets are placeholders, which the service refuses to
	// start with; an operator replaces them as the file's comment says.
	if _, err := loadConfig(env); err == nil {
		t.Fatal("the Secret example's placeholder secrets load; the service must refuse them")
	}
	for _, k := range []string{"BROLL_SIGNING_KEY", "BROLL_LEGACY_SECRET"} {
		if _, ok := env[k]; ok {
			env[k] = config.GenerateSecret()
		}
	}
	cfg, err := loadConfig(env)
	if err != nil {
		t.Fatalf("config does not load from the ConfigMap and Secret: %v", err)
	}
	if err := cfg.RequireSigningKey(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestK8sEnvironment: the ConfigMap and Secret hold only variables
// internal/config reads, secrets only in the Secret, and every pod takes its
// environment from those two and nowhere else.
func TestK8sEnvironment(t *testing.T) {
	c := loadCluster(t)
	known := knownEnv(t)
	k8sConfig(t, c)
	cm, sec := c.configMaps[configMapName], c.secrets[secretName]
	for k := range cm.Data {
		if !known[k] {
			t.Errorf("ConfigMap sets %s, which internal/config does not read", k)
		}
	}
	if len(sec.Data) > 0 {
		t.Errorf("Secret uses data:; keep the example readable with stringData")
	}
	for _, k := range []string{"DATABASE_URL", "REDIS_URL", "BROLL_SIGNING_KEY", "BROLL_LEGACY_SECRET"} {
		if _, ok := sec.StringData[k]; !ok {
			t.Errorf("Secret lacks %s", k)
		}
		if _, ok := cm.Data[k]; ok {
			t.Errorf("%s is in the ConfigMap; it carries a credential and belongs in the Secret", k)
		}
	}
	for k := range sec.StringData {
		if !known[k] {
			t.Errorf("Secret sets %s, which internal/config does not read", k)
		}
	}
	for _, ps := range c.podSpecs() {
		for _, ctr := range ps.spec.Containers {
			refs := map[string]bool{}
			for _, ef := range ctr.EnvFrom {
				switch {
				case ef.ConfigMapRef != nil && ef.ConfigMapRef.Name == configMapName:
					refs[configMapName] = true
				case ef.SecretRef != nil && ef.SecretRef.Name == secretName:
					refs[secretName] = true
				default:
					t.Errorf("%s/%s takes its environment from %+v", ps.owner, ctr.Name, ef)
				}
			}
			if !refs[configMapName] || !refs[secretName] {
				t.Errorf("%s/%s does not load both %s and %s", ps.owner, ctr.Name, configMapName, secretName)
			}
			for _, e := range ctr.Env {
				if !known[e.Name] {
					t.Errorf("%s/%s sets %s, which internal/config does not read", ps.owner, ctr.Name, e.Name)
				}
			}
		}
	}
}

// containerPort resolves a probe's or a Service's port (a number or a
// container port's name) to a number.
func containerPort(t *testing.T, ctr corev1.Container, p intstr.IntOrString) int32 {
	t.Helper()
	if p.Type == intstr.Int {
		return p.IntVal
	}
	for _, cp := range ctr.Ports {
		if cp.Name == p.StrVal {
			return cp.ContainerPort
		}
	}
	t.Errorf("%s: no container port named %q", ctr.Name, p.StrVal)
	return 0
}

func checkProbe(t *testing.T, what string, ctr corev1.Container, p *corev1.Probe, path string, port int32) {
	t.Helper()
	if p == nil || p.HTTPGet == nil {
		t.Errorf("%s: no HTTP probe", what)
		return
	}
	if p.HTTPGet.Path != path {
		t.Errorf("%s: path %s, want %s", what, p.HTTPGet.Path, path)
	}
	if got := containerPort(t, ctr, p.HTTPGet.Port); got != port {
		t.Errorf("%s: port %d, want %d", what, got, port)
	}
}

func checkScrape(t *testing.T, owner string, ann map[string]string, port int32) {
	t.Helper()
	if ann["prometheus.io/scrape"] != "true" || ann["prometheus.io/path"] != "/metrics" ||
		ann["prometheus.io/port"] != strconv.Itoa(int(port)) {
		t.Errorf("%s: scrape annotations %v, want /metrics on %d", owner, ann, port)
	}
}

// The worker's metrics and health listener (BROLL_WORKER_HTTP_ADDR) and its
// `-healthcheck` probe use this port by default.
const workerHTTPPort = 9090

func TestK8sProbesAndScraping(t *testing.T) {
	c := loadCluster(t)
	cfg := k8sConfig(t, c)
	_, p, err := net.SplitHostPort(cfg.HTTPAddr)
	if err != nil {
		t.Fatal(err)
	}
	apiPort := int32(mustAtoi(t, p))

	api := c.deployments[apiName]
	if api == nil {
		t.Fatalf("no Deployment %s", apiName)
	}
	ctr := api.Spec.Template.Spec.Containers[0]
	checkProbe(t, "api readiness", ctr, ctr.ReadinessProbe, "/readyz", apiPort)
	checkProbe(t, "api liveness", ctr, ctr.LivenessProbe, "/healthz", apiPort)
	// The API's metrics have their own listener, off the Service's port.
	_, mp, err := net.SplitHostPort(cfg.MetricsAddr)
	if err != nil {
		t.Fatalf("BROLL_METRICS_ADDR %q: %v", cfg.MetricsAddr, err)
	}
	metricsPort := int32(mustAtoi(t, mp))
	if metricsPort == apiPort {
		t.Errorf("the API serves /metrics on its public port %d", apiPort)
	}
	checkScrape(t, "api", api.Spec.Template.Annotations, metricsPort)
	if got := containerPort(t, ctr, intstr.FromString("metrics")); got != metricsPort {
		t.Errorf("api container port metrics is %d, BROLL_METRICS_ADDR says %d", got, metricsPort)
	}

	worker := c.deployments[workerName]
	if worker == nil {
		t.Fatalf("no Deployment %s", workerName)
	}
	wctr := worker.Spec.Template.Spec.Containers[0]
	checkProbe(t, "worker liveness", wctr, wctr.LivenessProbe, "/healthz", workerHTTPPort)
	// Ready only while Postgres and Redis answer: a worker cut off from
	// either takes no jobs, and a rollout waits for the new pods to reach
	// them before it stops the old ones.
	checkProbe(t, "worker readiness", wctr, wctr.ReadinessProbe, "/readyz", workerHTTPPort)
	checkScrape(t, "worker", worker.Spec.Template.Annotations, workerHTTPPort)

	for name, want := range map[string][]string{apiName: {"broll-api"}, workerName: {"broll-worker"}} {
		if got := c.deployments[name].Spec.Template.Spec.Containers[0].Command; len(got) != 1 || got[0] != want[0] {
			t.Errorf("%s runs %v, want %v", name, got, want)
		}
	}
	job := c.jobs[migrateName]
	if job == nil {
		t.Fatalf("no Job %s", migrateName)
	}
	jspec := job.Spec.Template.Spec
	if got := jspec.Containers[0].Command; len(got) != 2 || got[0] != "brollctl" || got[1] != "migrate" {
		t.Errorf("migrate Job runs %v, want brollctl migrate", got)
	}
	if jspec.RestartPolicy != corev1.RestartPolicyNever && jspec.RestartPolicy != corev1.RestartPolicyOnFailure {
		t.Errorf("migrate Job restartPolicy %q", jspec.RestartPolicy)
	}
}

// TestK8sPods: resources, a locked-down security context and a shutdown
// budget on every pod.
func TestK8sPods(t *testing.T) {
	c := loadCluster(t)
	cfg := k8sConfig(t, c)
	for _, ps := range c.podSpecs() {
		for _, ctr := range ps.spec.Containers {
			what := ps.owner + "/" + ctr.Name
			req, lim := ctr.Resources.Requests, ctr.Resources.Limits
			if req.Cpu().IsZero() || req.Memory().IsZero() {
				t.Errorf("%s: no CPU and memory requests; the scheduler and the HPA need them", what)
			}
			if lim.Memory().IsZero() || lim.Memory().Cmp(*req.Memory()) < 0 {
				t.Errorf("%s: memory limit %v below request %v or missing", what, lim.Memory(), req.Memory())
			}
			nonRoot := ps.spec.SecurityContext != nil && ps.spec.SecurityContext.RunAsNonRoot != nil && *ps.spec.SecurityContext.RunAsNonRoot
			sc := ctr.SecurityContext
			if sc != nil && sc.RunAsNonRoot != nil {
				nonRoot = *sc.RunAsNonRoot
			}
			if !nonRoot {
				t.Errorf("%s: runAsNonRoot is not set", what)
			}
			if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
				sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
				t.Errorf("%s: want readOnlyRootFilesystem and no privilege escalation", what)
			}
		}
		if ps.owner == "job/"+migrateName {
			continue
		}
		// The kubelet's SIGKILL must come after the preStop pause and the
		// program's own graceful shutdown.
		var preStop time.Duration
		if lc := ps.spec.Containers[0].Lifecycle; lc != nil && lc.PreStop != nil && lc.PreStop.Sleep != nil {
			preStop = time.Duration(lc.PreStop.Sleep.Seconds) * time.Second
		}
		grace := 30 * time.Second
		if g := ps.spec.TerminationGracePeriodSeconds; g != nil {
			grace = time.Duration(*g) * time.Second
		}
		if grace <= preStop+cfg.ShutdownTimeout {
			t.Errorf("%s: terminationGracePeriodSeconds %s <= preStop %s + BROLL_SHUTDOWN_TIMEOUT %s",
				ps.owner, grace, preStop, cfg.ShutdownTimeout)
		}
	}
}

// TestK8sScaling: the API scales on CPU, the worker on the queue's depth,
// each by its HPA; every selector really picks its pods, and each has a
// disruption budget that evicts one pod at a time.
func TestK8sScaling(t *testing.T) {
	c := loadCluster(t)
	api, worker := c.deployments[apiName], c.deployments[workerName]
	for _, d := range c.deployments {
		sel, err := metav1LabelSelector(d.Spec.Selector)
		if err != nil || !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
			t.Errorf("deployment %s: selector %v does not match its pods %v", d.Name, d.Spec.Selector, d.Spec.Template.Labels)
		}
	}
	if len(c.hpas) != 2 {
		t.Fatalf("want two HPAs (the API's and the worker's), have %d", len(c.hpas))
	}
	targets := map[string]*autoscalingv2.HorizontalPodAutoscaler{}
	for _, h := range c.hpas {
		ref := h.Spec.ScaleTargetRef
		if ref.APIVersion != "apps/v1" || ref.Kind != "Deployment" || c.deployments[ref.Name] == nil {
			t.Errorf("HPA %s targets %+v, want a Deployment of ours", h.Name, ref)
			continue
		}
		targets[ref.Name] = h
		if h.Spec.MinReplicas == nil || *h.Spec.MinReplicas < 2 || h.Spec.MaxReplicas <= *h.Spec.MinReplicas {
			t.Errorf("HPA %s: replicas %v..%d, want at least 2 and room to grow", h.Name, h.Spec.MinReplicas, h.Spec.MaxReplicas)
		}
		if c.deployments[ref.Name].Spec.Replicas != nil {
			t.Errorf("Deployment %s sets replicas; its HPA owns the count and apply would reset it", ref.Name)
		}
	}
	if h := targets[api.Name]; h == nil {
		t.Errorf("no HPA scales the API Deployment")
	} else {
		cpu := false
		for _, m := range h.Spec.Metrics {
			cpu = cpu || m.Resource != nil && m.Resource.Name == corev1.ResourceCPU &&
				m.Resource.Target.AverageUtilization != nil && *m.Resource.Target.AverageUtilization > 0
		}
		if !cpu {
			t.Errorf("HPA %s has no CPU utilization target", h.Name)
		}
	}
	// Workers scale on the work waiting, not on CPU (a worker waiting on
	// the embedder is idle): asynq's queue depth, which every worker
	// exports (asynq_queue_size) and an adapter serves as an external
	// metric, averaged per pod.
	if h := targets[worker.Name]; h == nil {
		t.Errorf("no HPA scales the worker Deployment")
	} else {
		depth := false
		for _, m := range h.Spec.Metrics {
			depth = depth || m.Type == autoscalingv2.ExternalMetricSourceType && m.External != nil &&
				m.External.Metric.Name == "asynq_queue_size" && m.External.Target.Type == autoscalingv2.AverageValueMetricType &&
				m.External.Target.AverageValue != nil && m.External.Target.AverageValue.Sign() > 0
		}
		if !depth {
			t.Errorf("HPA %s does not scale on asynq_queue_size per pod: %+v", h.Name, h.Spec.Metrics)
		}
	}

	svc := c.services[apiName]
	if svc == nil {
		t.Fatalf("no Service %s", apiName)
	}
	if !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(api.Spec.Template.Labels)) ||
		labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(worker.Spec.Template.Labels)) {
		t.Errorf("Service %s selector %v must pick the API pods only", svc.Name, svc.Spec.Selector)
	}
	cfg := k8sConfig(t, c)
	_, p, _ := net.SplitHostPort(cfg.HTTPAddr)
	for _, sp := range svc.Spec.Ports {
		if got := containerPort(t, api.Spec.Template.Spec.Containers[0], sp.TargetPort); got != int32(mustAtoi(t, p)) {
			t.Errorf("Service port %d targets %d, the API listens on %s", sp.Port, got, cfg.HTTPAddr)
		}
	}
	// One budget per Deployment, one pod at a time: minAvailable 1 would let
	// a drain evict 9 of 10 API pods at once.
	budgets := map[string]int{}
	for _, pdb := range c.pdbs {
		sel, err := metav1LabelSelector(pdb.Spec.Selector)
		if err != nil {
			t.Errorf("PodDisruptionBudget %s: %v", pdb.Name, err)
			continue
		}
		for _, d := range []*appsv1.Deployment{api, worker} {
			if sel.Matches(labels.Set(d.Spec.Template.Labels)) {
				budgets[d.Name]++
			}
		}
		if pdb.Spec.MinAvailable != nil || pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 {
			t.Errorf("PodDisruptionBudget %s: minAvailable %v, maxUnavailable %v; want maxUnavailable: 1",
				pdb.Name, pdb.Spec.MinAvailable, pdb.Spec.MaxUnavailable)
		}
	}
	for _, d := range []*appsv1.Deployment{api, worker} {
		if budgets[d.Name] != 1 {
			t.Errorf("%d PodDisruptionBudgets select the %s pods, want 1", budgets[d.Name], d.Name)
		}
	}
}

// TestK8sMedia: every API and worker pod mounts the same ReadWriteMany
// claim at BROLL_MEDIA_DIR, since any API pod may serve any clip and any
// worker pod process it.
func TestK8sMedia(t *testing.T) {
	c := loadCluster(t)
	cfg := k8sConfig(t, c)
	for _, name := range []string{apiName, workerName} {
		checkK8sMediaMount(t, c, name, cfg.MediaDir)
	}
}

func checkK8sMediaMount(t *testing.T, c *cluster, name, mediaDir string) {
	t.Helper()
	spec := c.deployments[name].Spec.Template.Spec
	volumes := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = v
	}
	mounted := false
	for _, m := range spec.Containers[0].VolumeMounts {
		if m.MountPath != mediaDir {
			continue
		}
		mounted = true
		v := volumes[m.Name]
		if v.PersistentVolumeClaim == nil {
			t.Fatalf("%s: media volume %s is not a PersistentVolumeClaim", name, m.Name)
		}
		pvc := c.pvcs[v.PersistentVolumeClaim.ClaimName]
		if pvc == nil {
			t.Fatalf("claim %s is not among the manifests", v.PersistentVolumeClaim.ClaimName)
		}
		rwx := false
		for _, mode := range pvc.Spec.AccessModes {
			rwx = rwx || mode == corev1.ReadWriteMany
		}
		if !rwx {
			t.Errorf("claim %s is %v: pods on several nodes need ReadWriteMany", pvc.Name, pvc.Spec.AccessModes)
		}
		if m.ReadOnly {
			t.Errorf("%s: media is mounted read-only; imports and previews write into it", name)
		}
	}
	if !mounted {
		t.Errorf("%s mounts nothing at BROLL_MEDIA_DIR %s", name, mediaDir)
	}
	if sc := spec.SecurityContext; sc == nil || sc.FSGroup == nil {
		t.Errorf("%s pods set no fsGroup; the non-root user could not write the media volume", name)
	}
}
