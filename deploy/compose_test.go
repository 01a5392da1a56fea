package deploy

import (
	"context"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"

	"broll/internal/config"
)

// signingKey is what an operator exports before `docker compose up`.
var signingKey = config.GenerateSecret()

// loadCompose loads ../docker-compose.yml with the Compose specification's
// own loader (interpolation, schema validation, consistency checks), with
// env as the only environment: the machine's is never consulted.
func loadCompose(t *testing.T, env ...string) (*types.Project, error) {
	t.Helper()
	opts, err := cli.NewProjectOptions([]string{"../docker-compose.yml"},
		cli.WithWorkingDirectory(".."), cli.WithName("broll"), cli.WithEnv(env))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return opts.LoadProject(ctx)
}

func mustLoadCompose(t *testing.T) *types.Project {
	t.Helper()
	p, err := loadCompose(t, "BROLL_SIGNING_KEY="+signingKey)
	if err != nil {
		t.Fatalf("docker-compose.yml does not load: %v", err)
	}
	return p
}

// The programs the image holds, one per cmd/ directory.
func programs(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir("../cmd")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	if len(out) != 3 {
		t.Fatalf("cmd/ holds %v; expected the three programs", out)
	}
	return out
}

func TestComposeServices(t *testing.T) {
	p := mustLoadCompose(t)
	want := []string{"api", "migrate", "ollama", "ollama-pull", "postgres", "redis", "worker"}
	got := p.ServiceNames()
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("services %v, want %v", got, want)
	}
	if img := p.Services["postgres"].Image; !strings.HasPrefix(img, "pgvector/pgvector:") {
		t.Errorf("postgres image %q: want the official pgvector image", img)
	}
	for name, s := range p.Services {
		ours := s.Image == "broll:latest" || s.Image == "broll-worker:latest"
		if s.Image == "" || strings.HasSuffix(s.Image, ":latest") && !ours || !strings.Contains(s.Image, ":") {
			t.Errorf("%s: image %q is not pinned to a tag", name, s.Image)
		}
	}
	if got := p.Services["ollama-pull"].Entrypoint; !slices.Equal(got, []string{"ollama", "pull", "nomic-embed-text"}) {
		t.Errorf("ollama-pull runs %v, want ollama pull nomic-embed-text", got)
	}
}

// TestComposeOrder checks the start order docs/deploy.md promises: data stores
// healthy, then the migration and the model pull done, then api and worker.
func TestComposeOrder(t *testing.T) {
	p := mustLoadCompose(t)
	want := map[string]map[string]string{
		"ollama-pull": {"ollama": types.ServiceConditionHealthy},
		"migrate":     {"postgres": types.ServiceConditionHealthy, "redis": types.ServiceConditionHealthy},
		"api": {"migrate": types.ServiceConditionCompletedSuccessfully,
			"ollama-pull": types.ServiceConditionCompletedSuccessfully, "redis": types.ServiceConditionHealthy},
		"worker": {"migrate": types.ServiceConditionCompletedSuccessfully,
			"ollama-pull": types.ServiceConditionCompletedSuccessfully, "redis": types.ServiceConditionHealthy},
	}
	for svc, deps := range want {
		got := p.Services[svc].DependsOn
		for dep, cond := range deps {
			if got[dep].Condition != cond {
				t.Errorf("%s depends on %s with condition %q, want %q", svc, dep, got[dep].Condition, cond)
			}
		}
		for dep := range got {
			if _, ok := deps[dep]; !ok {
				t.Errorf("%s depends on %s, which docs/deploy.md does not describe", svc, dep)
			}
		}
	}
	// A healthy condition on a service without a healthcheck never holds.
	for name, s := range p.Services {
		for dep, d := range s.DependsOn {
			if d.Condition == types.ServiceConditionHealthy && p.Services[dep].HealthCheck == nil {
				t.Errorf("%s waits for %s to be healthy, but %s has no healthcheck", name, dep, dep)
			}
		}
	}
	// One-shots must not be restarted, or "completed" never comes.
	for _, name := range []string{"migrate", "ollama-pull"} {
		if r := p.Services[name].Restart; r != "" && r != "no" {
			t.Errorf("%s restart %q: a one-shot must not restart", name, r)
		}
	}
}

func TestComposeHealthchecks(t *testing.T) {
	p := mustLoadCompose(t)
	for _, name := range []string{"postgres", "redis", "ollama", "api", "worker"} {
		hc := p.Services[name].HealthCheck
		if hc == nil || hc.Disable || len(hc.Test) < 2 {
			t.Errorf("%s has no healthcheck", name)
		}
	}
	// The image has no shell and no curl: the programs probe themselves.
	for name, want := range map[string][]string{
		"api":    {"CMD", "broll-api", "-healthcheck"},
		"worker": {"CMD", "broll-worker", "-healthcheck"},
	} {
		if hc := p.Services[name].HealthCheck; hc == nil || !slices.Equal([]string(hc.Test), want) {
			t.Errorf("%s healthcheck %v, want %v", name, hc, want)
		}
	}
}

// TestComposeEnvironment runs config.Load over the environment each of the
// image's services gets: it must load (every required variable present and
// valid), and every variable of the service's own must be one config reads.
func TestComposeEnvironment(t *testing.T) {
	p := mustLoadCompose(t)
	known := knownEnv(t)
	progs := programs(t)
	for _, name := range []string{"migrate", "api", "worker"} {
		s := p.Services[name]
		checkComposeImage(t, p, name)
		if len(s.Entrypoint) != 0 {
			t.Errorf("%s sets entrypoint %v; the image's programs are chosen by command", name, s.Entrypoint)
		}
		if len(s.Command) == 0 || !slices.Contains(progs, s.Command[0]) {
			t.Errorf("%s command %v is not one of the image's programs %v", name, s.Command, progs)
		}
		env := map[string]string{}
		for k, v := range s.Environment {
			if v == nil {
				t.Errorf("%s: %s has no value", name, k)
				continue
			}
			env[k] = *v
			if isServiceVar(k) && !known[k] {
				t.Errorf("%s sets %s, which internal/config does not read", name, k)
			}
		}
		cfg, err := loadConfig(env)
		if err != nil {
			t.Errorf("%s: config does not load from its environment: %v", name, err)
			continue
		}
		// The API signs download links and seals webhook secrets; the
		// worker opens those secrets to sign deliveries.
		if name == "api" || name == "worker" {
			if err := cfg.RequireSigningKey(); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
		// The addresses must name services of this file.
		for _, raw := range []string{cfg.DatabaseURL, cfg.RedisURL, cfg.OllamaHost} {
			u, err := url.Parse(raw)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := p.Services[u.Hostname()]; !ok {
				t.Errorf("%s: %s points at host %q, which is no service", name, raw, u.Hostname())
			}
		}
		if name == "api" || name == "worker" {
			// The API serves and imports media; the worker's media jobs read
			// clips and write previews and thumbnails.
			checkMediaMount(t, s, cfg.MediaDir)
		}
		if name == "api" {
			_, port, _ := net.SplitHostPort(cfg.HTTPAddr)
			published := false
			for _, pc := range s.Ports {
				published = published || pc.Target == mustAtoi(t, port)
			}
			if !published {
				t.Errorf("api listens on %s but publishes %v", cfg.HTTPAddr, s.Ports)
			}
			// Metrics stay on the compose network, for a scraper there.
			_, mport, _ := net.SplitHostPort(cfg.MetricsAddr)
			for _, pc := range s.Ports {
				if pc.Target == mustAtoi(t, mport) {
					t.Errorf("api publishes its metrics port %s", mport)
				}
			}
			if !slices.Contains(s.Expose, mport) {
				t.Errorf("api does not expose its metrics port %s to the compose network: %v", mport, s.Expose)
			}
			if s.StopGracePeriod == nil || time.Duration(*s.StopGracePeriod) <= cfg.ShutdownTimeout {
				t.Errorf("api stop_grace_period %v must exceed BROLL_SHUTDOWN_TIMEOUT %s", s.StopGracePeriod, cfg.ShutdownTimeout)
			}
		}
	}
}

// checkComposeImage: migrate and api run the static image (the Dockerfile's
// api target), the worker the worker target, which has ffmpeg; both are
// built from deploy/Dockerfile, and every image is built by one service.
func checkComposeImage(t *testing.T, p *types.Project, name string) {
	t.Helper()
	want := map[string]struct{ image, target string }{
		"migrate": {"broll:latest", "api"},
		"api":     {"broll:latest", "api"},
		"worker":  {"broll-worker:latest", "worker"},
	}[name]
	s := p.Services[name]
	if s.Image != want.image {
		t.Errorf("%s runs image %q, want %q", name, s.Image, want.image)
	}
	builder := ""
	for other, o := range p.Services {
		if o.Image == want.image && o.Build != nil {
			if builder != "" {
				t.Errorf("%s is built by both %s and %s", want.image, builder, other)
			}
			builder = other
			if o.Build.Dockerfile != "deploy/Dockerfile" || o.Build.Target != want.target {
				t.Errorf("%s builds %s from %s target %q, want deploy/Dockerfile target %q",
					other, want.image, o.Build.Dockerfile, o.Build.Target, want.target)
			}
		}
	}
	if builder == "" {
		t.Errorf("no service builds %s, which %s runs", want.image, name)
	}
}

func checkMediaMount(t *testing.T, s types.ServiceConfig, dir string) {
	t.Helper()
	for _, v := range s.Volumes {
		if v.Target == dir && v.Type == types.VolumeTypeVolume {
			return
		}
	}
	t.Errorf("%s: BROLL_MEDIA_DIR %s is not a named volume; media would vanish with the container", s.Name, dir)
}

// TestComposeNeedsSigningKey: without BROLL_SIGNING_KEY the file refuses to
// load rather than start an API that cannot sign download links.
func TestComposeNeedsSigningKey(t *testing.T) {
	_, err := loadCompose(t)
	if err == nil || !strings.Contains(err.Error(), "BROLL_SIGNING_KEY") {
		t.Fatalf("loading without BROLL_SIGNING_KEY: %v, want an error naming it", err)
	}
}
