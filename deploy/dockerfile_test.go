package deploy

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// stage is one FROM ... section of a Dockerfile, its instructions joined
// across line continuations.
type stage struct {
	from         string
	instructions []string
}

// parseDockerfile is a small honest reader, not a full parser: it splits
// instructions, joins `\` continuations and drops comments, which is all the
// checks below need.
func parseDockerfile(t *testing.T, path string) []stage {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var stages []stage
	var cur strings.Builder
	flush := func() {
		ins := strings.TrimSpace(cur.String())
		cur.Reset()
		if ins == "" {
			return
		}
		if strings.HasPrefix(strings.ToUpper(ins), "FROM ") {
			stages = append(stages, stage{from: ins})
			return
		}
		if len(stages) == 0 {
			t.Fatalf("%s: instruction before FROM: %q", path, ins)
		}
		s := &stages[len(stages)-1]
		s.instructions = append(s.instructions, ins)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "#") {
			continue
		}
		if strings.HasSuffix(trimmed, `\`) {
			cur.WriteString(strings.TrimSuffix(trimmed, `\`) + " ")
			continue
		}
		cur.WriteString(trimmed)
		flush()
	}
	flush()
	return stages
}

func (s stage) find(keyword string) []string {
	var out []string
	for _, ins := range s.instructions {
		if strings.HasPrefix(strings.ToUpper(ins), keyword+" ") {
			out = append(out, ins)
		}
	}
	return out
}

func TestDockerfile(t *testing.T) {
	stages := parseDockerfile(t, "Dockerfile")
	if len(stages) < 2 {
		t.Fatalf("%d stage(s): the image must be a multi-stage build", len(stages))
	}
	build, final := stages[0], stages[len(stages)-1]
	if !regexp.MustCompile(`(?i)^FROM golang:1\.\d+`).MatchString(build.from) {
		t.Errorf("build stage %q: want a pinned golang image", build.from)
	}
	if !strings.Contains(final.from, "distroless/static") && !strings.Contains(final.from, "scratch") {
		t.Errorf("final stage %q: want a static base image (distroless/static or scratch)", final.from)
	}

	builds := strings.Join(build.find("RUN"), "\n")
	if !strings.Contains(builds, "CGO_ENABLED=0") || !strings.Contains(builds, "go build") {
		t.Errorf("the build stage must run go build with CGO_ENABLED=0 (static binaries): %s", builds)
	}
	copies := strings.Join(final.find("COPY"), "\n")
	for _, prog := range programs(t) {
		if !strings.Contains(builds, "./cmd/"+prog) {
			t.Errorf("the build stage does not build ./cmd/%s", prog)
		}
		if !regexp.MustCompile(`--from=\S+ .*/` + regexp.QuoteMeta(prog) + `\b`).MatchString(copies) {
			t.Errorf("the final stage does not copy %s from the build stage", prog)
		}
	}

	users := final.find("USER")
	if len(users) == 0 {
		t.Fatal("the final stage sets no USER: it would run as root")
	}
	user := strings.Fields(users[len(users)-1])[1]
	if uid, _, _ := strings.Cut(user, ":"); uid == "0" || uid == "root" || !regexp.MustCompile(`^\d+$`).MatchString(uid) {
		t.Errorf("USER %s: want a numeric non-root user, which Kubernetes' runAsNonRoot can verify", user)
	}
	// The programs are chosen by the command, so that `docker compose run
	// api brollctl ...` works: a fixed ENTRYPOINT would swallow it.
	if eps := final.find("ENTRYPOINT"); len(eps) > 0 {
		t.Errorf("final stage sets %q; the command must choose the program", eps)
	}
	if cmds := final.find("CMD"); len(cmds) == 0 || !strings.Contains(cmds[len(cmds)-1], `["broll-api"]`) {
		t.Errorf("final stage CMD %q: want the exec form [\"broll-api\"] (no shell in the image)", cmds)
	}
}

// TestDockerignore keeps the local stack's live Postgres data out of the
// build context: sending it would be slow, and fail on files only the
// postgres user may read.
func TestDockerignore(t *testing.T) {
	raw, err := os.ReadFile("../.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(string(raw))
	for _, want := range []string{".stack", ".git", "bin"} {
		found := false
		for _, l := range lines {
			found = found || strings.Trim(l, "/") == want
		}
		if !found {
			t.Errorf(".dockerignore does not exclude %s", want)
		}
	}
}
