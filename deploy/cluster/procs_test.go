// Package cluster tests the service as operators run it: the real
// broll-api, broll-worker and brollctl binaries as separate processes,
// several of each against one Postgres and one Redis, and what happens
// when those go away (Redis stopped, Postgres restarted, a worker killed,
// the embedder down). Processes are built once per run in TestMain.
package cluster

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// bin is where TestMain built the three programs.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "broll-cluster-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := func() int {
		defer os.RemoveAll(dir)
		if err := build(dir); err != nil {
			fmt.Fprintln(os.Stderr, "build:", err)
			return 1
		}
		bin = dir
		return m.Run()
	}()
	if code == 0 {
		if err := goleak.Find(goleak.IgnoreCurrent()); err != nil {
			fmt.Fprintln(os.Stderr, "goroutine leak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

func build(dir string) error {
	// go test puts its own GOROOT/bin first on the PATH of the test binary.
	gobin, err := exec.LookPath("go")
	if err != nil {
		return err
	}
	cmd := exec.Command(gobin, "build", "-o", dir+"/", "./cmd/broll-api", "./cmd/broll-worker", "./cmd/brollctl")
	cmd.Dir = "../.."
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%w: %s", err, out)
	}
	return nil
}

// proc is one running program with its JSON log lines collected.
type proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}

	mu    sync.Mutex
	lines []string
	err   error
}

// start runs bin/program with exactly env (nothing of the test's own
// environment leaks in) and stops it when the test ends.
func start(t *testing.T, program string, env map[string]string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(filepath.Join(bin, program), args...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", program, err)
	}
	p := &proc{name: program, cmd: cmd, done: make(chan struct{})}
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			p.mu.Lock()
			p.lines = append(p.lines, sc.Text())
			p.mu.Unlock()
		}
	}()
	go func() {
		<-scanned
		err := cmd.Wait()
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("%s log tail:\n%s", p.name, p.tail(30))
		}
	})
	return p
}

// waitLog returns the first log line whose msg is msg, decoded.
func (p *proc) waitLog(t *testing.T, msg string, within time.Duration) map[string]any {
	t.Helper()
	deadline := time.Now().Add(within)
	for seen := 0; ; {
		p.mu.Lock()
		lines := p.lines[seen:]
		p.mu.Unlock()
		for _, l := range lines {
			seen++
			var rec map[string]any
			if json.Unmarshal([]byte(l), &rec) == nil && rec["msg"] == msg {
				return rec
			}
		}
		select {
		case <-p.done:
			t.Fatalf("%s exited (%v) before logging %q:\n%s", p.name, p.exitErr(), msg, p.tail(20))
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not log %q within %s:\n%s", p.name, msg, within, p.tail(20))
		}
	}
}

func (p *proc) exitErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

func (p *proc) tail(n int) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	from := max(0, len(p.lines)-n)
	return strings.Join(p.lines[from:], "\n")
}

// logged says whether any log line contains s.
func (p *proc) logged(s string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range p.lines {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}

// kill ends the process at once (SIGKILL), as a crash or an OOM kill would.
func (p *proc) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// stop asks for a graceful shutdown (SIGTERM) and waits for it.
func (p *proc) stop(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		if err := p.exitErr(); err != nil {
			t.Errorf("%s exited with %v:\n%s", p.name, err, p.tail(20))
		}
	case <-time.After(30 * time.Second):
		t.Errorf("%s did not stop within 30s", p.name)
	}
}

// node is an API process and the base URL it listens on.
type node struct {
	*proc
	url string
	// metrics is the base URL that serves /metrics: an API node's own
	// metrics listener, a worker's HTTP listener.
	metrics string
}

func startAPI(t *testing.T, env map[string]string) node {
	t.Helper()
	env = with(env, map[string]string{"BROLL_HTTP_ADDR": "127.0.0.1:0", "BROLL_METRICS_ADDR": "127.0.0.1:0"})
	p := start(t, "broll-api", env)
	rec := p.waitLog(t, "api listening", 30*time.Second)
	// As a load balancer does, the tests wait for the node to be warm.
	p.waitLog(t, "warm-up done; ready", time.Minute)
	return node{proc: p, url: "http://" + rec["addr"].(string), metrics: "http://" + rec["metrics_addr"].(string)}
}

// startWorker starts a worker; its url serves /healthz and /metrics.
func startWorker(t *testing.T, env map[string]string) node {
	t.Helper()
	env = with(env, map[string]string{"BROLL_WORKER_HTTP_ADDR": "127.0.0.1:0"})
	p := start(t, "broll-worker", env)
	rec := p.waitLog(t, "worker starting", 30*time.Second)
	p.waitLog(t, "worker started", 30*time.Second)
	url := "http://" + rec["http_addr"].(string)
	return node{proc: p, url: url, metrics: url}
}

// ctl runs brollctl to completion and returns its standard output.
func ctl(t *testing.T, env map[string]string, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(bin, "brollctl"), args...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("brollctl %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errOut.String())
	}
	return out.String()
}

// with returns a copy of base with extra set on top.
func with(base, extra map[string]string) map[string]string {
	out := make(map[string]string, len(base)+len(extra))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

// reply is one HTTP answer, its JSON body decoded.
type reply struct {
	status int
	header http.Header
	body   map[string]any
	raw    []byte
}

var client = &http.Client{Timeout: 30 * time.Second}

// call sends one request; a transport error fails the test (a node must
// always answer, whatever is down behind it).
func call(t *testing.T, base, method, path, key string, body any) reply {
	t.Helper()
	r, err := tryCall(base, method, path, key, body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return r
}

func tryCall(base, method, path, key string, body any) (reply, error) {
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, base+path, rd)
	if err != nil {
		return reply{}, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := client.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	out := reply{status: res.StatusCode, header: res.Header, raw: raw}
	if len(raw) > 0 && raw[0] == '{' {
		_ = json.Unmarshal(raw, &out.body)
	}
	return out, nil
}

// wantProblem checks an error reply has the problem+json shape and code.
func wantProblem(t *testing.T, what string, r reply, status int, code string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("%s: status %d, want %d: %s", what, r.status, status, r.raw)
	}
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/problem+json") {
		t.Errorf("%s: content type %q", what, ct)
	}
	if r.body["code"] != code {
		t.Errorf("%s: code %v, want %s", what, r.body["code"], code)
	}
	if s, _ := r.body["request_id"].(string); s == "" {
		t.Errorf("%s: no request_id in %s", what, r.raw)
	}
}

// eventually polls check until it returns nil or within passes.
func eventually(t *testing.T, within time.Duration, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s: %v", what, within, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
