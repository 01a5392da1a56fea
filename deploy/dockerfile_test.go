package deploy

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"broll/billing/license"
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

// name is the stage's name (FROM image AS name), or "".
func (s stage) name() string {
	f := strings.Fields(s.from)
	if len(f) == 4 && strings.EqualFold(f[2], "AS") {
		return f[3]
	}
	return ""
}

// checkRuntimeStage checks what both images promise: every program copied
// from the build stage, a numeric non-root user, no ENTRYPOINT and cmd as
// the default command in the exec form.
func checkRuntimeStage(t *testing.T, s stage, cmd string) {
	t.Helper()
	copies := strings.Join(s.find("COPY"), "\n")
	for _, prog := range programs(t) {
		if !regexp.MustCompile(`--from=build .*/` + regexp.QuoteMeta(prog) + `\b`).MatchString(copies) {
			t.Errorf("stage %q does not copy %s from the build stage", s.from, prog)
		}
	}
	users := s.find("USER")
	if len(users) == 0 {
		t.Errorf("stage %q sets no USER: it would run as root", s.from)
		return
	}
	user := strings.Fields(users[len(users)-1])[1]
	if uid, _, _ := strings.Cut(user, ":"); uid == "0" || uid == "root" || !regexp.MustCompile(`^\d+$`).MatchString(uid) {
		t.Errorf("stage %q: USER %s: want a numeric non-root user, which Kubernetes' runAsNonRoot can verify", s.from, user)
	}
	// The programs are chosen by the command, so that `docker compose run
	// api brollctl ...` works: a fixed ENTRYPOINT would swallow it.
	if eps := s.find("ENTRYPOINT"); len(eps) > 0 {
		t.Errorf("stage %q sets %q; the command must choose the program", s.from, eps)
	}
	if cmds := s.find("CMD"); len(cmds) == 0 || !strings.Contains(cmds[len(cmds)-1], `["`+cmd+`"]`) {
		t.Errorf("stage %q CMD %q: want the exec form [%q]", s.from, cmds, cmd)
	}
}

// TestDockerfile: the default target (the last stage) is the static API
// image; the build stage makes static binaries of every program.
func TestDockerfile(t *testing.T) {
	stages := parseDockerfile(t, "Dockerfile")
	if len(stages) < 2 {
		t.Fatalf("%d stage(s): the image must be a multi-stage build", len(stages))
	}
	build, final := stages[0], stages[len(stages)-1]
	if !regexp.MustCompile(`(?i)^FROM golang:1\.\d+\S* AS build$`).MatchString(build.from) {
		t.Errorf("build stage %q: want a pinned golang image named build", build.from)
	}
	if !strings.Contains(final.from, "distroless/static") && !strings.Contains(final.from, "scratch") {
		t.Errorf("final stage %q: want a static base image (distroless/static or scratch)", final.from)
	}
	if final.name() != "api" {
		t.Errorf("final stage %q: name it api, the target Compose and docs/deploy.md build", final.from)
	}

	builds := strings.Join(build.find("RUN"), "\n")
	if !strings.Contains(builds, "CGO_ENABLED=0") || !strings.Contains(builds, "go build") {
		t.Errorf("the build stage must run go build with CGO_ENABLED=0 (static binaries): %s", builds)
	}
	for _, prog := range programs(t) {
		if !strings.Contains(builds, "./cmd/"+prog) {
			t.Errorf("the build stage does not build ./cmd/%s", prog)
		}
	}
	checkRuntimeStage(t, final, "broll-api")
	if runs := final.find("RUN"); len(runs) > 0 {
		t.Errorf("the static image runs %q; it has no shell", runs)
	}
}

// TestDockerfileWorker: the worker target is Debian 12 slim with the
// distribution's ffmpeg (which brings ffprobe), so that media jobs run;
// without them the worker logs "media processing off".
func TestDockerfileWorker(t *testing.T) {
	var worker *stage
	for _, s := range parseDockerfile(t, "Dockerfile") {
		if s.name() == "worker" {
			worker = &s
		}
	}
	if worker == nil {
		t.Fatal("no stage named worker")
	}
	if !regexp.MustCompile(`(?i)^FROM debian:(12|bookworm)-slim AS worker$`).MatchString(worker.from) {
		t.Errorf("worker stage %q: want debian:12-slim", worker.from)
	}
	runs := strings.Join(worker.find("RUN"), "\n")
	install := regexp.MustCompile(`apt-get install -y --no-install-recommends ([a-z0-9 .+-]+)`).FindStringSubmatch(runs)
	if !strings.Contains(runs, "apt-get update") || install == nil || !slices.Contains(strings.Fields(install[1]), "ffmpeg") {
		t.Errorf("the worker stage does not apt-get install ffmpeg (which holds ffmpeg and ffprobe): %s", runs)
	}
	if !strings.Contains(runs, "rm -rf /var/lib/apt/lists/*") {
		t.Errorf("the worker stage keeps apt's lists in the image: %s", runs)
	}
	checkRuntimeStage(t, *worker, "broll-worker")
	// The numeric USER must be a user of the image, like distroless's
	// nonroot, so that tools which look it up find it.
	users := worker.find("USER")
	if len(users) > 0 {
		uid, gid, _ := strings.Cut(strings.Fields(users[len(users)-1])[1], ":")
		if !strings.Contains(runs, "useradd --uid "+uid) || gid != "" && !strings.Contains(runs, "groupadd --gid "+gid) {
			t.Errorf("USER %s:%s is not created in the worker stage: %s", uid, gid, runs)
		}
	}
}

// TestDockerfileFonts: the fonts stage installs the certificate's font
// packages and copies every file billing/license reads, and both images
// take them: the API prints certificates, and brollctl (in both images)
// checks the names they show.
func TestDockerfileFonts(t *testing.T) {
	stages := parseDockerfile(t, "Dockerfile")
	var fonts *stage
	for i, s := range stages {
		if s.name() == "fonts" {
			fonts = &stages[i]
		}
	}
	if fonts == nil {
		t.Fatal("no stage named fonts")
	}
	runs := strings.Join(fonts.find("RUN"), "\n")
	install := regexp.MustCompile(`apt-get install -y --no-install-recommends ([a-z0-9 .+-]+)`).FindStringSubmatch(runs)
	for _, pkg := range []string{"fonts-noto-core", "fonts-nanum", "fonts-droid-fallback"} {
		if len(install) < 2 || !slices.Contains(strings.Fields(install[1]), pkg) {
			t.Errorf("the fonts stage does not install %s: %s", pkg, runs)
		}
	}
	copied := strings.Fields(runs)
	for _, f := range license.FontFiles() {
		if !slices.Contains(copied, f) {
			t.Errorf("the fonts stage does not copy %s", f)
		}
	}
	for _, s := range stages {
		if n := s.name(); n == "api" || n == "worker" {
			if !slices.Contains(s.find("COPY"), "COPY --from=fonts /rootfs/usr/share/fonts /usr/share/fonts") {
				t.Errorf("the %s image does not copy the fonts: %q", n, s.find("COPY"))
			}
		}
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
