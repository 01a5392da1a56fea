package deploy

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// deployGuide is where the Deploy section lives since the README links to it.
const deployGuide = "../docs/deploy.md"

// guides returns README.md and every page of docs/, one after the other, so
// that a command shown on any page is checked, not only the Deploy page's.
func guides(t *testing.T) string {
	t.Helper()
	pages, err := filepath.Glob("../docs/*.md")
	if err != nil || len(pages) == 0 {
		t.Fatalf("no pages in docs/: %v", err)
	}
	var all strings.Builder
	for _, p := range append([]string{"../README.md"}, pages...) {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(raw)
		all.WriteString("\n")
	}
	return all.String()
}

// composeCommands returns every `docker compose ...` command in text,
// continuation lines joined, each cut at a shell operator or comment.
func composeCommands(text string) []string {
	text = regexp.MustCompile(`\\\n\s*`).ReplaceAllString(text, " ")
	return regexp.MustCompile("docker compose [^\n`&;|#]+").FindAllString(text, -1)
}

// TestReadmeComposeCommands checks that the compose commands of the README
// and docs/ name services of docker-compose.yml and, for `run`, a program of
// the image, and that the Deploy page shows the pinned Postgres image and a
// `brollctl` run.
func TestReadmeComposeCommands(t *testing.T) {
	p := mustLoadCompose(t)
	progs := programs(t)
	deploy, err := os.ReadFile(deployGuide)
	if err != nil {
		t.Fatal(err)
	}
	cmds := composeCommands(guides(t))
	onDeployPage := map[string]bool{}
	for _, c := range composeCommands(string(deploy)) {
		onDeployPage[c] = true
	}
	runs := 0
	for _, cmd := range cmds {
		args := strings.Fields(cmd)[2:]
		// Global flags before the subcommand: --profile NAME.
		for len(args) >= 2 && args[0] == "--profile" {
			args = args[2:]
		}
		if len(args) == 0 {
			continue
		}
		sub, rest := args[0], args[1:]
		var services []string
		switch sub {
		case "run", "exec":
			// Flags first (--rm, -T, -d), then the service, then its command.
			i := 0
			for i < len(rest) && strings.HasPrefix(rest[i], "-") {
				i++
			}
			if i+1 >= len(rest) {
				t.Errorf("README: %q names no service and command", cmd)
				continue
			}
			services = append(services, rest[i])
			if !slices.Contains(progs, rest[i+1]) {
				t.Errorf("README: %q runs %q, not one of the image's programs %v", cmd, rest[i+1], progs)
			}
			if sub == "run" && rest[i] == "api" && rest[i+1] == "brollctl" && onDeployPage[cmd] {
				runs++
			}
		default:
			for i := 0; i < len(rest); i++ {
				a := rest[i]
				switch {
				case a == "--scale" && i+1 < len(rest):
					i++
					svc, _, _ := strings.Cut(rest[i], "=")
					services = append(services, svc)
				case strings.HasPrefix(a, "-"):
				default:
					services = append(services, a)
				}
			}
		}
		for _, s := range services {
			if _, ok := p.Services[s]; !ok {
				t.Errorf("README: %q names service %q, which docker-compose.yml lacks", cmd, s)
			}
		}
	}
	if img := p.Services["postgres"].Image; !strings.Contains(string(deploy), img) {
		t.Errorf("%s does not name the Postgres image the compose file pins, %s", deployGuide, img)
	}
	if runs == 0 {
		t.Errorf("%s shows no `docker compose run --rm api brollctl ...`; found %q", deployGuide, cmds)
	}
}

// TestReadmeKubectlNames checks that the objects the kubectl lines of the
// README and docs/ name (deploy/broll-api, job/broll-migrate, ...) are the
// manifests' own, and that the Deploy page names them.
func TestReadmeKubectlNames(t *testing.T) {
	deploy, err := os.ReadFile(deployGuide)
	if err != nil {
		t.Fatal(err)
	}
	c := loadCluster(t)
	exists := map[string]bool{}
	for name := range c.deployments {
		exists["deploy/"+name] = true
	}
	for name := range c.jobs {
		exists["job/"+name] = true
	}
	for name := range c.services {
		exists["svc/"+name] = true
	}
	for name := range c.hpas {
		exists["hpa/"+name] = true
	}
	ref := regexp.MustCompile(`\b(deploy|job|svc|hpa)/[a-z0-9-]+`)
	seen := 0
	for _, line := range strings.Split(guides(t), "\n") {
		if !strings.Contains(line, "kubectl") {
			continue
		}
		for _, m := range ref.FindAllString(line, -1) {
			if _, err := os.Stat("../" + m); err == nil {
				continue // a path of the repository (deploy/k8s), not an object
			}
			if strings.Contains(string(deploy), line) {
				seen++
			}
			if !exists[m] {
				t.Errorf("README: %q names %s, which deploy/k8s does not define", strings.TrimSpace(line), m)
			}
		}
		if strings.Contains(line, "-l app.kubernetes.io/name=broll-migrate") && c.jobs["broll-migrate"].Labels["app.kubernetes.io/name"] != "broll-migrate" {
			t.Errorf("README selects the migrate Job by a label it does not carry")
		}
	}
	if seen < 4 {
		t.Errorf("%s names only %d Kubernetes objects; the Deploy section is missing", deployGuide, seen)
	}
}
